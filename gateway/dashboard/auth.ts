/**
 * Who may use the dashboard. With a secret configured (DASHBOARD_PASSWORD or API_SERVER_KEY) every page
 * needs a login: a random session id in an HttpOnly, SameSite=Strict cookie, valid for a fixed time,
 * kept in memory (a restart logs everyone out). Without one, the dashboard answers only when the server
 * listens on loopback and the request comes from loopback, which is the API server's own rule: on
 * loopback it needs no key either. The gateway's request guard (gateway/http/guard.ts) also holds such
 * requests to a loopback Host with the server's port and the server's own Origin (a page of another
 * site reaching 127.0.0.1 by DNS rebinding names its own host). Every change (POST) carries a CSRF token
 * bound to the login.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { DashboardAccess } from "./types.js";

/** The login cookie's name. */
export const COOKIE_NAME = "herald_dashboard";
const DEFAULT_TTL_MS = 12 * 3_600_000;
/** Failed logins from one address within the window before further tries are refused. */
const MAX_FAILURES = 10;
const FAILURE_WINDOW_MS = 15 * 60_000;
const MAX_SESSIONS = 1_000;

/** A request's standing. */
export type AuthState =
  | { kind: "ok"; csrf: string; sessionId?: string | undefined }
  | { kind: "login" }
  | { kind: "refused"; reason: string };

interface LoginSession {
  csrf: string;
  expiresAt: number;
}

const LOOPBACK_ADDRESS = /^(127\.|::1$|::ffff:127\.)/;

/** Logins, CSRF tokens and the loopback rule. */
export class DashboardAuth {
  readonly #secrets: Buffer[];
  readonly #loopbackServer: boolean;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #sessions = new Map<string, LoginSession>();
  readonly #failures = new Map<string, number[]>();
  /** The CSRF token of open (no-login) mode, for this process's life. */
  readonly #openCsrf = token();

  constructor(access: DashboardAccess, now: () => number = Date.now) {
    this.#secrets = access.secrets.filter(Boolean).map(digest);
    this.#loopbackServer = access.loopbackServer;
    this.#ttlMs = access.sessionTtlMs ?? DEFAULT_TTL_MS;
    this.#now = now;
  }

  /** Whether a login exists at all (a secret is configured). */
  get loginRequired(): boolean {
    return this.#secrets.length > 0;
  }

  /** The standing of `req`: logged in (or open on loopback), asked to log in, or refused outright. */
  check(req: IncomingMessage): AuthState {
    if (!this.loginRequired) {
      const local = this.#loopbackServer && LOOPBACK_ADDRESS.test(req.socket.remoteAddress ?? "");
      return local
        ? { kind: "ok", csrf: this.#openCsrf }
        : {
            kind: "refused",
            reason:
              "The dashboard has no login configured, so it answers only on this machine (API_SERVER_HOST=127.0.0.1, opened as http://127.0.0.1:<port>/dashboard). Fix: set DASHBOARD_PASSWORD (or API_SERVER_KEY) to use it from elsewhere.",
          };
    }
    const id = cookieValue(req.headers.cookie, COOKIE_NAME);
    const session = id ? this.#sessions.get(id) : undefined;
    if (!id || !session) return { kind: "login" };
    if (session.expiresAt <= this.#now()) {
      this.#sessions.delete(id);
      return { kind: "login" };
    }
    return { kind: "ok", csrf: session.csrf, sessionId: id };
  }

  /**
   * Checks a password from `remote`; on success a new login session and its Set-Cookie value. Refused
   * (`retry`) after too many failures from one address.
   */
  login(
    password: string,
    remote: string,
    secure: boolean,
  ): { cookie: string } | { error: string; status: 401 | 429 } {
    const now = this.#now();
    const recent = (this.#failures.get(remote) ?? []).filter((t) => t > now - FAILURE_WINDOW_MS);
    if (recent.length >= MAX_FAILURES)
      return { error: "Too many failed logins from this address; wait 15 minutes.", status: 429 };
    const given = digest(password);
    const ok = this.#secrets.some((s) => timingSafeEqual(s, given));
    if (!ok) {
      recent.push(now);
      this.#failures.set(remote, recent);
      return { error: "Wrong password.", status: 401 };
    }
    this.#failures.delete(remote);
    this.#prune(now);
    const id = token();
    this.#sessions.set(id, { csrf: token(), expiresAt: now + this.#ttlMs });
    const maxAge = Math.floor(this.#ttlMs / 1000);
    return {
      cookie: `${COOKIE_NAME}=${id}; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure ? "; Secure" : ""}`,
    };
  }

  /** Ends a login; returns the Set-Cookie value that clears the cookie. */
  logout(sessionId: string | undefined): string {
    if (sessionId) this.#sessions.delete(sessionId);
    return `${COOKIE_NAME}=; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=0`;
  }

  /** Whether `given` is the CSRF token of `state` (constant time). */
  csrfValid(state: Extract<AuthState, { kind: "ok" }>, given: string | undefined): boolean {
    if (!given) return false;
    const a = digest(state.csrf);
    const b = digest(given);
    return timingSafeEqual(a, b);
  }

  #prune(now: number): void {
    for (const [id, s] of this.#sessions) if (s.expiresAt <= now) this.#sessions.delete(id);
    // A flood of logins cannot grow the map without bound: the oldest go first.
    while (this.#sessions.size >= MAX_SESSIONS) this.#sessions.delete(this.#sessions.keys().next().value!);
  }
}

function token(): string {
  return randomBytes(32).toString("base64url");
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** The value of cookie `name` in a Cookie header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
