/**
 * The agent side of `herald gateway` (part of the composition root, imported once the adapters poll):
 * the agent runtime on the embedded queue (tools, the execution backend's check, the MCP servers'
 * commands), the plugins with their commands and hooks, and the housekeeping of the workspaces and
 * files. With REDIS_URL the workers run the turns: the gateway keeps only the plugins and tells the
 * workers of reloads.
 */

import { join } from "node:path";
import { startHousekeeping, startWorkspaceHeartbeat } from "../agent/exec/index.js";
import { attachPlugins, type Plugins } from "../agent/plugins/index.js";
import { mcpCommands } from "../agent/tools/mcp/index.js";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { JobQueue } from "../core/turn.js";
import { filesInUse } from "../gateway/index.js";
import type { SqliteState } from "../sessions/index.js";
import { type AgentRuntime, createAgentRuntime } from "./agent-runtime.js";
import { announceToWorkers, readMcpServers } from "./announcements.js";
import type { HeraldConfig } from "./config.js";
import type { GatewayFeatures, LateParts } from "./gateway-features.js";
import type { GatewayOptions } from "./gateway-main.js";
import { createPlugins } from "./plugins.js";

/**
 * The agent side of the gateway and the plugins, loaded once the adapters started (they hold inbound
 * messages until this resolves). On the embedded queue the turns run here: the agent runtime consumes
 * the queue. With REDIS_URL,
 * `herald worker` processes run the turns and reach state over the state API; they hear of a session's
 * end and of the reload commands, and the gateway loads the plugins only for their commands and hooks.
 */
export async function attachAgent(
  config: HeraldConfig,
  features: GatewayFeatures,
  parts: { queue: JobQueue; logger: Logger; late: LateParts; options: GatewayOptions },
): Promise<{ agent: AgentRuntime | undefined; plugins: Plugins }> {
  const { runner } = features;
  const { queue, logger, late } = parts;
  const agent = config.queue.redisUrl
    ? undefined
    : await createAgentRuntime(config, {
        logger,
        queue,
        state: features.localState,
        retryBaseDelayMs: parts.options.retryBaseDelayMs,
      });
  const announce = agent ? undefined : queue.announce?.bind(queue);
  const plugins = agent?.plugins ?? (await createPlugins(config, logger));
  late.plugins = plugins;
  attachPlugins(plugins, {
    gateway: runner,
    logger,
    announceReload: announce && (() => announce({ type: "reload", what: "plugins" })),
  });
  // `/reload-mcp` reads mcp_servers: again and drops the cached lists of servers no longer there.
  const loadServers = () => {
    const servers = readMcpServers(config);
    features.retainMcpServers(servers);
    return servers;
  };
  if (announce) late.mcpServers = announceToWorkers(config, runner, { announce, loadServers, logger });
  if (!agent) return { agent, plugins };
  runner.on("session-ended", ({ session: ended }) => {
    agent.tools
      .endSession(ended.key, ended.id)
      .catch((err: unknown) =>
        logger.warn({ error: describeError(err) }, "could not end the background processes of a session"),
      );
  });
  const mcp = agent.tools.mcp;
  late.mcpServers = () => mcp.servers().map((s) => s.config);
  runner.commands.add(
    mcpCommands({
      target: { type: "here", manager: mcp },
      loadServers,
      notify: (chat, text) => runner.control.notify(chat, text),
      logger: logger.child({ component: "mcp" }),
    }),
  );
  await agent.consume(config.queue.concurrency);
  return { agent, plugins };
}

/**
 * Old workspaces (where this process runs the turns; on Redis the workers prune them) and old cache and
 * media files, never one an open turn or an undelivered reply names. `herald chat`, which may run beside
 * a gateway, prunes nothing but marks the workspaces of its background processes used, as a gateway does.
 */
export function startGatewayHousekeeping(
  config: HeraldConfig,
  state: SqliteState,
  agent: AgentRuntime | undefined,
  options: GatewayOptions,
  logger: Logger,
): (() => void) | undefined {
  const log = logger.child({ component: "housekeeping" });
  const workspaces = agent?.workspaces;
  if (options.localOnly) return workspaces && startWorkspaceHeartbeat(workspaces, log);
  return startHousekeeping({
    cacheDir: join(config.homeDir, "cache"),
    mediaRetentionMs: config.media.retentionDays * 86_400_000,
    inUse: () => filesInUse(state),
    workspaces,
    logger: log,
  });
}
