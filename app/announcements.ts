/**
 * What the gateway tells the `herald worker` processes on Redis (`JobQueue.announce`), and what a
 * worker does about it (`onAnnouncement`): a session's end kills the background processes its turns
 * started there; `/reload-mcp` restarts each worker's MCP servers with `mcp_servers:` read again from
 * its config.yaml; `/reload-plugins` loads each worker's plugins folder again (the gateway reloads its
 * own copy too: `attachPlugins`). A worker logs each reload's outcome; the chat is told how many
 * workers heard it.
 */

import type { Plugins } from "../agent/plugins/index.js";
import { type McpServerConfig, mcpCommands } from "../agent/tools/mcp/index.js";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { JobQueue, WorkerAnnouncement } from "../core/turn.js";
import type { GatewayRunner } from "../gateway/index.js";
import { type HeraldConfig, loadConfig } from "./config.js";
import type { AgentTools } from "./tools.js";

/**
 * `mcp_servers:` read again from config.yaml (and `.env`) of `config.homeDir`, as at start. Throws a
 * `ConfigError` when the file is no longer valid.
 */
export function readMcpServers(config: HeraldConfig): McpServerConfig[] {
  return loadConfig({ env: { ...process.env, HERALD_HOME: config.homeDir } }).mcpServers;
}

/**
 * Gateway side, where workers run the turns: announces every session's end, and adds `/reload-mcp`,
 * which tells the workers to reload (`attachPlugins` takes the announcement for `/reload-plugins`).
 * Returns the MCP servers turns get their toolsets from: config.yaml's at start, then those of the
 * last `/reload-mcp`.
 */
export function announceToWorkers(
  config: HeraldConfig,
  runner: GatewayRunner,
  deps: {
    announce: (event: WorkerAnnouncement) => Promise<number>;
    /** Reads `mcp_servers:` again (`readMcpServers`); may throw a ConfigError. */
    loadServers: () => McpServerConfig[];
    logger: Logger;
  },
): () => readonly McpServerConfig[] {
  const { announce, logger } = deps;
  runner.on("session-ended", ({ session: ended }) => {
    announce({ type: "session-ended", sessionKey: ended.key, sessionId: ended.id }).catch((err: unknown) =>
      logger.warn({ err: describeError(err) }, "could not announce the end of a session"),
    );
  });
  let servers: readonly McpServerConfig[] = config.mcpServers;
  runner.commands.add(
    mcpCommands({
      target: {
        type: "workers",
        announce: () => announce({ type: "reload", what: "mcp" }),
        adopt: (reread) => {
          servers = reread;
        },
      },
      loadServers: deps.loadServers,
      notify: (chat, text) => runner.control.notify(chat, text),
      logger: logger.child({ component: "mcp" }),
    }),
  );
  return () => servers;
}

/** What a worker acts on. */
export interface WorkerAnnouncementDeps {
  config: HeraldConfig;
  tools: AgentTools;
  plugins: Plugins;
  logger: Logger;
}

/**
 * Worker side: listens to the gateway's announcements on `queue` (call before `consume()`, so the
 * worker hears them once it counts as one). Reloads run one at a time, in the order they came, and
 * never reject. Turns running meanwhile keep the tools they began with, as at the gateway: a plugin
 * tool runs its old code to the end of the turn, and a call to an MCP server that was restarted under
 * the turn answers that it is not available (the model sees a tool error; the turn goes on). Returns
 * the unsubscribe function (no reload starts after it).
 */
export function listenToGateway(queue: JobQueue, deps: WorkerAnnouncementDeps): () => void {
  const log = deps.logger.child({ component: "announcements" });
  let reloads = Promise.resolve();
  let listening = true;
  const unsubscribe =
    queue.onAnnouncement?.((event: WorkerAnnouncement) => {
      switch (event.type) {
        case "session-ended":
          deps.tools
            .endSession(event.sessionKey, event.sessionId)
            .catch((err: unknown) =>
              log.warn({ err: describeError(err) }, "could not end the background processes of a session"),
            );
          return;
        case "reload":
          reloads = reloads.then(() => (listening ? reload(event.what, deps, log) : undefined));
          return;
      }
    }) ?? (() => undefined);
  return () => {
    listening = false;
    unsubscribe();
  };
}

async function reload(what: "mcp" | "plugins", deps: WorkerAnnouncementDeps, log: Logger): Promise<void> {
  try {
    if (what === "mcp") await reloadMcp(deps, log);
    else await reloadPlugins(deps, log);
  } catch (err) {
    log.error({ what, err: describeError(err) }, "reload failed");
  }
}

async function reloadMcp({ config, tools }: WorkerAnnouncementDeps, log: Logger): Promise<void> {
  let servers: McpServerConfig[];
  try {
    servers = readMcpServers(config);
  } catch (err) {
    // As at the gateway: a config.yaml that no longer loads leaves the running servers alone.
    log.error({ err: describeError(err) }, "mcp servers not reloaded: config.yaml could not be read");
    return;
  }
  log.info({ servers: servers.map((s) => s.name) }, "reloading mcp servers (told by the gateway)");
  const status = await tools.mcp.reload(servers);
  const down = status.filter((s) => s.state !== "connected" && s.state !== "disabled");
  const fields = {
    servers: status.map((s) => `${s.name}: ${s.state}${s.error ? ` (${s.error})` : ""}`),
  };
  if (down.length > 0) log.warn(fields, "mcp servers reloaded, some not connected");
  else log.info(fields, "mcp servers reloaded");
}

async function reloadPlugins({ config, plugins }: WorkerAnnouncementDeps, log: Logger): Promise<void> {
  // Switched off in this worker's config: none were loaded at start, and none are now.
  if (!config.plugins.enabled) {
    log.info({ what: "plugins" }, "plugins not reloaded: plugins.enabled is false here");
    return;
  }
  const reports = await plugins.host.load();
  const fields = { plugins: reports.map((r) => `${r.name}: ${r.status}`) };
  if (reports.some((r) => r.status === "failed")) log.warn(fields, "plugins reloaded, some failed");
  else log.info(fields, "plugins reloaded");
}
