/**
 * How remote skills and skill indexes are downloaded, for `herald skills` and the gateway alike: the
 * guarded fetch, public addresses only unless `web.allow_private`.
 */
import type { RemoteSkillOptions } from "../skills/index.js";
import type { HeraldConfig } from "./config.js";

/**
 * Downloads `url` (at most `maxBytes`) through the guarded fetch; rejects saying why not. The web
 * tools' module loads at the first download.
 */
export function skillDownload(config: Pick<HeraldConfig, "web">): RemoteSkillOptions["download"] {
  return async (url, maxBytes) => {
    const { safeFetch } = await import("../agent/tools/web/index.js");
    const res = await safeFetch(url, {
      maxBytes,
      allowPrivate: config.web.allowPrivate,
      timeoutMs: 120_000,
      types: {
        accepts: () => true,
        accept: "application/zip, application/gzip, application/json, */*",
        what: "skills are archives",
      },
    });
    if (res.status >= 400) throw new Error(`${url} answered HTTP ${res.status}`);
    return res.bytes;
  };
}
