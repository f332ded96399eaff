/**
 * The agent side of a process, the same wherever turns run (the embedded gateway, each `herald
 * worker`): the tools (execution backend, workspaces, web, voice, vision, MCP), the plugins with their
 * tools and hooks, the model client on the configured providers, and the turn handler that consumes
 * the job queue. Tools reach shared state through the `StateClient` the main hands in: in-process on
 * the gateway, over its state API on a worker.
 */

import { type HandoverRemote, WorkspaceHandover, withHandover } from "../agent/exec/handover/index.js";
import type { WorkspaceHousekeeping } from "../agent/exec/index.js";
import { type BackendName, DEFAULT_LIMITS, workspaceHousekeeping } from "../agent/exec/index.js";
import {
  createConfiguredModelClient,
  createTurnHandler,
  type StateClient,
  type ToolRegistry,
} from "../agent/index.js";
import type { Plugins } from "../agent/plugins/index.js";
import { providerInsightsNote } from "../agent/tools/memory-providers/index.js";
import type { Logger } from "../core/logger.js";
import type { JobHandler, JobQueue } from "../core/turn.js";
import type { HeraldConfig } from "./config.js";
import { createPlugins } from "./plugins.js";
import { type AgentTools, createAgentTools } from "./tools.js";

/** What {@link createAgentRuntime} is built on. */
export interface AgentRuntimeOptions {
  logger: Logger;
  /** The queue whose turns this process runs. */
  queue: JobQueue;
  /** Shared state as the tools reach it. */
  state: StateClient;
  /** Overrides the model client's retry timing (tests). */
  retryBaseDelayMs?: number | undefined;
  /**
   * A worker on Redis: its name (its background processes' ids say it) and, unless
   * `exec.workspace_handover` is off, the gateway's workspace store its turns pull from and push to.
   */
  worker?: { name: string; handover?: HandoverRemote | undefined } | undefined;
}

/** The agent side of one process. */
export interface AgentRuntime {
  tools: AgentTools;
  /** Plugins with their tools and tool hooks (loaded at start, again on /reload-plugins). */
  plugins: Plugins;
  /** The tools turns run with: the built-in ones and the plugins', as they are at each turn. */
  registry: ToolRegistry;
  /** Workspace pruning and the heartbeat of this process's background processes. */
  workspaces: WorkspaceHousekeeping;
  /** Takes turns from the queue, `concurrency` at once. Rejects when the queue cannot be consumed. */
  consume(concurrency: number): Promise<void>;
  /** Connects the MCP servers in the background; their tools appear as each one is up. */
  startMcp(): void;
  /** Kills background processes, stops the MCP servers and closes the backend. */
  close(): Promise<void>;
}

/**
 * Builds the tools and plugins and the turn handler on them. The tools are ready when this resolves;
 * nothing consumes the queue before `consume()`, and no MCP server connects before `startMcp()`.
 */
export async function createAgentRuntime(
  config: HeraldConfig,
  options: AgentRuntimeOptions,
): Promise<AgentRuntime> {
  const { logger, queue } = options;
  // Tools run where the turns run: commands in this machine's workspaces (HERALD_HOME/workspaces).
  const tools = await createAgentTools(config, logger.child({ component: "tools" }), {
    worker: options.worker?.name,
    mcpToolCache: options.state.mcpTools,
  });
  const plugins = await createPlugins(config, logger, tools);
  const registry = plugins.registry(tools.registry);
  const turns = createTurnHandler({
    model: createConfiguredModelClient(config, { retryBaseDelayMs: options.retryBaseDelayMs }),
    compressionModel: config.auxiliary.compression,
    tools: registry,
    hooks: plugins.hooks,
    beforeChange: tools.beforeChange,
    stageAttachments: tools.stageAttachments,
    transcribe: tools.transcribe,
    speakReply: tools.speakReply,
    state: options.state,
    turnNote: (job) => providerInsightsNote(job, options.state, logger),
    logger: logger.child({ component: "agent" }),
    homeDir: config.homeDir,
  });
  const handler = handedOver(turns, config, tools, options, logger);
  return {
    tools,
    plugins,
    registry,
    workspaces: workspaceHousekeeping(config, tools, logger.child({ component: "housekeeping" })),
    consume: (concurrency) => queue.consume(handler, { concurrency }),
    startMcp: () => tools.mcp.start(),
    close: () => tools.close(),
  };
}

/**
 * `turns` with the hand-over of their workspaces (agent/exec/handover/), on a worker, for the turns
 * whose agent's backend keeps workspaces on this host; the others (one machine, ssh's remote host, no
 * terminal tools) as they are.
 */
function handedOver(
  turns: JobHandler,
  config: HeraldConfig,
  tools: AgentTools,
  options: AgentRuntimeOptions,
  logger: Logger,
): JobHandler {
  const remote = options.worker?.handover;
  if (!remote) return turns;
  const quotaBytes = config.exec.limits.workspaceQuotaBytes ?? DEFAULT_LIMITS.workspaceQuotaBytes;
  const log = logger.child({ component: "handover" });
  const { executions } = tools;
  const byBackend = new Map<BackendName, JobHandler>();
  for (const [name, exec] of executions.byBackend) {
    if (!("backend" in exec) || name === "ssh") continue;
    const handover = new WorkspaceHandover({
      remote,
      backend: exec.backend,
      worker: options.worker?.name ?? "?",
      quotaBytes,
      logger: log,
    });
    byBackend.set(name, withHandover(turns, { handover, workspaces: tools.workspaces, logger: log }));
  }
  if (byBackend.size === 0) return turns;
  log.info(
    { worker: options.worker?.name, backends: [...byBackend.keys()] },
    "workspaces are handed over through the gateway",
  );
  return (job, ctx) => (byBackend.get(executions.backendOf(job.origin.sessionKey)) ?? turns)(job, ctx);
}
