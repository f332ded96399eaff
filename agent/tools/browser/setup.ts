/**
 * The browser toolset of one process, built from the config: off (and listed unavailable, with how to
 * install Chromium) when there is no browser to drive; otherwise its tools, with the proxy and the pool
 * started on the first call (puppeteer-core loads then, not at start-up).
 */
import { existsSync } from "node:fs";
import type { Logger } from "../../../core/logger.js";
import type { WorkspaceAccess } from "../../exec/index.js";
import type { UnavailableToolset } from "../../tool-registry.js";
import type { Tool } from "../../types.js";
import type { BrowserRuntime } from "./common.js";
import { browserTools } from "./declaration.js";
import { type BrowserSettings, INSTALL_CHROMIUM } from "./settings.js";

export { privateAllow } from "./proxy.js";
export type { BrowserSettings } from "./settings.js";

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
  // puppeteer-core, the pool and the proxy load with the first call, not at start-up.
  const start = (): Promise<BrowserRuntime> =>
    import("./runtime.js").then((m) => m.startBrowserRuntime(config, ports.logger));
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
    tools: browserTools(deps).map((t) => oneAtATime(t, chains)),
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
