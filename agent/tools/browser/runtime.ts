/** The browser's running parts, started by the toolset's first call: the proxy and the pool. */
import { join } from "node:path";
import type { Logger } from "../../../core/logger.js";
import type { BrowserRuntime } from "./common.js";
import { openBrowser } from "./launch.js";
import { BrowserPool } from "./pool.js";
import { fileProfiles } from "./profiles.js";
import { privateAllow, startBrowserProxy } from "./proxy.js";
import type { BrowserSettings } from "./settings.js";

/** Starts the proxy and the pool of `config.browser` (the browser itself opens with the first page). */
export async function startBrowserRuntime(config: BrowserSettings, logger: Logger): Promise<BrowserRuntime> {
  const section = config.browser;
  const ports = { logger };
  const proxy = await startBrowserProxy({
    allowPrivate: privateAllow(section.allowPrivateHosts, config.web.allowPrivate),
    logger: ports.logger,
  });
  const pool = new BrowserPool({
    open: () =>
      openBrowser({
        executable: section.executable,
        cdpUrl: section.cdpUrl,
        closedProxyUrl: proxy.closedUrl,
        logger: ports.logger,
      }),
    proxyUrl: proxy.pagesUrl,
    maxContexts: section.maxContexts,
    maxPages: section.maxPages,
    maxMemoryBytes: section.maxMemoryMb * 1024 * 1024,
    idleMs: section.idleMinutes * 60_000,
    navigationTimeoutMs: section.navigationTimeoutMs,
    profiles:
      section.persistProfile && config.homeDir
        ? fileProfiles(join(config.homeDir, "browser", "profiles"))
        : undefined,
    logger: ports.logger,
  });
  return { pool, proxy };
}
