/**
 * The browser toolset of one process, built from the config: off (and listed unavailable, with how to
 * install Chromium) when there is no browser to drive; otherwise its tools, with the proxy and the pool
 * started on the first call (puppeteer-core loads then, not at start-up).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../../../core/logger.js";
import type { WorkspaceAccess } from "../../exec/index.js";
import type { UnavailableToolset } from "../../tool-registry.js";
import type { Tool } from "../../types.js";
import type { VisionEndpoint } from "../vision/index.js";
import type { BrowserRuntime } from "./common.js";
import { openBrowser } from "./launch.js";
import { BrowserPool } from "./pool.js";
import { fileProfiles } from "./profiles.js";
import { type PrivateAllow, startBrowserProxy } from "./proxy.js";
import { type BrowserSection, INSTALL_CHROMIUM } from "./settings.js";
import { actTools } from "./tools-act.js";
import { fileTools } from "./tools-files.js";
import { pageTools } from "./tools-page.js";

/** The settings the browser tools read (`HeraldConfig` has this shape). */
export interface BrowserSettings {
  browser: BrowserSection;
  web: { allowPrivate: boolean };
  exec: { dangerousCommands: "manual" | "deny" | "off" };
  vision?: VisionEndpoint | undefined;
  /** `HERALD_HOME`: where `browser.persist_profile` keeps the users' cookies. */
  homeDir?: string | undefined;
}

/** The browser toolset of a process. */
export interface BrowserTools {
  tools: Tool[];
  /**
   * Closes the session's browser context (its tabs and cookies); with `sessionId`, only when that
   * session opened it. Never throws.
   */
  endSession(sessionKey: string, sessionId?: string): Promise<void>;
  /** Closes the browser and the proxy. Idempotent. */
  close(): Promise<void>;
  /** The running parts, once a call started them (tests, the benchmark). */
  started(): Promise<BrowserRuntime> | undefined;
}

/**
 * Whether `browser.allow_private_hosts` (or `web.allow_private`) lets a page reach a private address:
 * an entry `host` matches the host as asked or the address on any port, `host:port` on that port.
 */
export function privateAllow(entries: readonly string[], all: boolean): PrivateAllow {
  const parsed = entries.map((entry) => {
    const m = /^\[?([^\]]+?)\]?(?::(\d+))?$/.exec(entry.trim().toLowerCase());
    return { host: m?.[1] ?? entry, port: m?.[2] ? Number(m[2]) : undefined };
  });
  return ({ hostname, address, port }) =>
    all ||
    parsed.some(
      (e) =>
        (e.host === hostname.toLowerCase() || e.host === address) &&
        (e.port === undefined || e.port === port),
    );
}

/**
 * `tool` with its calls run one at a time per session: the model may send several calls in one step
 * (typing into two fields), and two actions on one tab at once would interleave their keystrokes.
 */
function oneAtATime(tool: Tool, chains: Map<string, Promise<unknown>>): Tool {
  return {
    ...tool,
    execute(args, ctx) {
      const key = ctx.origin.sessionKey;
      const run = (chains.get(key) ?? Promise.resolve())
        .catch(() => undefined)
        .then(() => tool.execute(args, ctx));
      chains.set(key, run);
      const done = () => {
        if (chains.get(key) === run) chains.delete(key);
      };
      run.then(done, done);
      return run;
    },
  };
}

/** Builds the browser toolset; without a browser it has no tools and says why in `unavailable`. */
export function createBrowserTools(
  config: BrowserSettings,
  ports: { access: WorkspaceAccess; logger: Logger; unavailable: UnavailableToolset[] },
): BrowserTools {
  const section = config.browser;
  if (!section.cdpUrl && !existsSync(section.executable)) {
    ports.unavailable.push({
      toolset: "browser",
      missing: `${section.executable} (Chromium)`,
      fix: INSTALL_CHROMIUM,
    });
    return { tools: [], endSession: async () => {}, close: async () => {}, started: () => undefined };
  }
  let runtime: Promise<BrowserRuntime> | undefined;
  const chains = new Map<string, Promise<unknown>>();
  const start = async (): Promise<BrowserRuntime> => {
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
  };
  const deps = {
    runtime: () => {
      runtime ??= start();
      runtime.catch(() => {
        runtime = undefined;
      });
      return runtime;
    },
    access: ports.access,
    vision: config.vision,
    approve: section.approve,
    approvalMode: config.exec.dangerousCommands,
    downloadMaxBytes: section.downloadMaxBytes,
  };
  return {
    tools: [...pageTools(deps), ...actTools(deps), ...fileTools(deps)].map((t) => oneAtATime(t, chains)),
    started: () => runtime,
    async endSession(sessionKey, sessionId) {
      const running = await runtime?.catch(() => undefined);
      await running?.pool.closeSession(sessionKey, "the session ended", sessionId);
    },
    async close() {
      const running = await runtime?.catch(() => undefined);
      runtime = undefined;
      await running?.pool.close();
      await running?.proxy.close();
    },
  };
}
