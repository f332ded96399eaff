/**
 * `browser.persist_profile`: a user's cookies kept across sessions. When a session's context closes
 * its cookies are written to `HERALD_HOME/browser/profiles/<hash of the user>.json` (mode 0600: they
 * are logins), and the user's next session's context starts with them. Only cookies: no history,
 * cache or storage. Each user has their own file; no session of another user reads it.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Cookie, CookieData } from "puppeteer-core";
import { writeFileAtomic } from "../../exec/index.js";

/** Where a user's cookies are kept. */
export interface ProfileStore {
  /** The user's cookies; none when there is no profile yet (or it is unreadable). */
  load(userKey: string): Promise<CookieData[]>;
  /** Replaces the user's cookies. */
  save(userKey: string, cookies: readonly Cookie[]): Promise<void>;
}

/** Profiles as files under `dir`. */
export function fileProfiles(dir: string): ProfileStore {
  const fileOf = (userKey: string) =>
    join(dir, `${createHash("sha256").update(userKey).digest("hex").slice(0, 32)}.json`);
  return {
    async load(userKey) {
      const text = await readFile(fileOf(userKey), "utf8").catch(() => "[]");
      try {
        const cookies = JSON.parse(text) as CookieData[];
        return Array.isArray(cookies) ? cookies : [];
      } catch {
        return [];
      }
    },
    async save(userKey, cookies) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const kept: CookieData[] = cookies.map((c) => ({
        name: c.name,
        value: c.value,
        domain: c.domain,
        path: c.path,
        secure: c.secure,
        httpOnly: c.httpOnly,
        ...(c.sameSite ? { sameSite: c.sameSite } : {}),
        ...(c.expires > 0 ? { expires: c.expires } : {}),
      }));
      await writeFileAtomic(fileOf(userKey), JSON.stringify(kept), 0o600);
    },
  };
}
