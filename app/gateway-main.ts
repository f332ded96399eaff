/**
 * The composition root of `herald gateway`: opens state, builds the queue, the runner and its features
 * (gateway-features.ts), the agent side on the embedded queue (agent-runtime.ts), the platform adapters
 * (gateway-adapters.ts), the dashboard and the HTTP server (http-server.ts). The only place where
 * concrete classes are wired together.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { ApiAdapter } from "../adapters/api/index.js";
import type { ChatPort } from "../adapters/shared/index.js";
import type { DelegateStateApi, Delegation } from "../agent/delegate/index.js";
import { startHousekeeping, startWorkspaceHeartbeat } from "../agent/exec/index.js";
import { createCatalog, modelConfigProblem, type ToolRegistry } from "../agent/index.js";
import { attachPlugins, type Plugins } from "../agent/plugins/index.js";
import { createJobQueue } from "../agent/queue/index.js";
import { type McpManager, mcpCommands } from "../agent/tools/mcp/index.js";
import type { TaskBoardStateApi } from "../agent/tools/task-board/index.js";
import { isLoopbackHost } from "../agent/tools/web/index.js";
import { ConfigError, describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { JobQueue } from "../core/turn.js";
import type { PlatformAdapter } from "../core/types.js";
import { createGatewayDashboard } from "../gateway/dashboard/index.js";
import { type HttpServerHandle, watchWorkers } from "../gateway/http/index.js";
import { filesInUse, type GatewayRunner, startMaintenance } from "../gateway/index.js";
import { createMcpRoute } from "../gateway/mcp-server/index.js";
import type { CronService } from "../scheduler/index.js";
import { SqliteState, type SqliteTaskBoard } from "../sessions/index.js";
import { type AgentRuntime, createAgentRuntime } from "./agent-runtime.js";
import { announceToWorkers, readMcpServers } from "./announcements.js";
import { createChatPort } from "./chat-port.js";
import type { HeraldConfig } from "./config.js";
import { createAdapters, startAdapters } from "./gateway-adapters.js";
import { createGatewayFeatures, type GatewayFeatures, type LateParts } from "./gateway-features.js";
import { startGatewayHttp } from "./http-server.js";
import { chatParser } from "./platforms.js";
import { createPlugins } from "./plugins.js";
import { createStateApiRoute } from "./state-api.js";
import { heraldVersion } from "./version.js";
import { workspaceStoreRoute } from "./workspace-api.js";

export interface GatewayOptions {
  logger: Logger;
  /** Adapters to run besides the configured ones (tests, `herald chat`). */
  extraAdapters?: PlatformAdapter[];
  /** Skip the configured platform adapters and the HTTP server (`herald chat`). @defaultValue false */
  localOnly?: boolean;
  /** Overrides the model client's retry timing (tests). */
  retryBaseDelayMs?: number;
}

export interface Gateway {
  config: HeraldConfig;
  state: SqliteState;
  queue: JobQueue;
  runner: GatewayRunner;
  api: ApiAdapter | undefined;
  http: HttpServerHandle | undefined;
  /** Cron jobs: fires them (not with `localOnly`) and serves the `cronjob` tool. */
  cron: CronService;
  /** Memory, skills and the background learning review. */
  learning: GatewayFeatures["learning"];
  /** `delegate_task`'s children and background tasks, with the task board beside them. */
  delegation: Delegation & {
    board: SqliteTaskBoard;
    stateApis: { delegate: DelegateStateApi; taskBoard: TaskBoardStateApi };
  };
  /** Plugins and their hooks (`/reload-plugins` reloads them). */
  plugins: Plugins;
  /** The MCP servers of this process's tools (undefined on Redis: the workers run them). */
  mcp: McpManager | undefined;
  /** The tools turns run with here, plugins' included (undefined on Redis: the workers run them). */
  tools: ToolRegistry | undefined;
  /** What chat clients read beside the messages (`herald chat`, `/v1/herald/*`). */
  chat: ChatPort;
  /** Adapters that started, by platform. */
  adapters: ReadonlyMap<string, PlatformAdapter>;
  /** Platforms that failed to start, with the reason. */
  failed: ReadonlyMap<string, string>;
  stop(): Promise<void>;
}

/** Starts everything `herald gateway` runs. Adapters that fail to start are logged; the rest run on. */
export async function startGateway(config: HeraldConfig, options: GatewayOptions): Promise<Gateway> {
  const { logger } = options;
  const redis = Boolean(config.queue.redisUrl);
  prepareStart(config, logger);
  const state = SqliteState.open(join(config.homeDir, "state.db"), {
    groupMode: config.sessions.groupSessions,
    // This process is the one writer: commits are batched and recent histories stay in memory.
    groupCommit: true,
    historyCacheBytes: 4 * 1024 * 1024,
    onEffectError: (err) => logger.error({ error: describeError(err) }, "an effect after commit failed"),
  });
  const queue = await createJobQueue(config, logger.child({ component: "queue" }));
  const late: LateParts = { mcpServers: () => config.mcpServers };
  const features = createGatewayFeatures(config, {
    state,
    queue,
    logger,
    late,
    retryBaseDelayMs: options.retryBaseDelayMs,
    localOnly: options.localOnly,
  });
  const { runner, cron, approvals, delegation } = features;
  const { agent, plugins } = await attachAgent(config, features, { queue, logger, late, options });
  const chat = createChatPort({
    state,
    runner,
    queue,
    catalog: createCatalog(config),
    modelOf: (key) => late.sessionModels?.modelOf(key) ?? config.model.default ?? config.model.name,
  });
  const { api, adapters, failed } = await createAdapters(config, {
    state,
    runner,
    chat,
    logger,
    extraAdapters: options.extraAdapters,
    localOnly: options.localOnly,
  });
  const started = new Map<string, PlatformAdapter>();
  const dashboard = options.localOnly
    ? undefined
    : createGatewayDashboard(config, {
        state,
        runner,
        queue,
        cron,
        approvals,
        learning: features.learning,
        adapters: started,
        failed,
        loopbackServer: isLoopbackHost(config.apiServer.host),
        logger,
      });
  runner.start();
  delegation.resume();
  if (!options.localOnly) approvals.start();
  const stopMaintenance = startMaintenance({ state, logger: logger.child({ component: "maintenance" }) });
  const stopHousekeeping = startGatewayHousekeeping(config, state, agent, options, logger);
  await startAdapters(adapters, { runner, started, failed, logger });
  // `herald chat` serves the tool but leaves firing to the gateway.
  if (!options.localOnly) await cron.start();

  const http = options.localOnly
    ? undefined
    : await startHttp(config, { state, queue, logger, features, api, started, failed, dashboard });
  if (http) logger.info({ url: http.url }, "http server listening");
  // After the API answers: MCP servers connect in the background, their tools appear as each is up.
  agent?.startMcp();
  logger.info({ adapters: [...started.keys()], failed: [...failed.keys()] }, "gateway ready");
  const stopWatching = redis && !options.localOnly ? watchWorkers(queue, logger) : undefined;

  const stops = { stopWatching, stopMaintenance, stopHousekeeping, dashboard, http };
  return gatewayHandle(config, { state, queue, features, agent, plugins, api, chat, started, failed, stops });
}

/** Refuses a Redis gateway without the state API's key, warns of a missing model, makes the folders. */
function prepareStart(config: HeraldConfig, logger: Logger): void {
  if (config.queue.redisUrl && !config.gatewayClient.key) {
    throw new ConfigError(
      "HERALD_GATEWAY_KEY",
      "REDIS_URL is set, so turns run on `herald worker` processes, which reach the gateway's state API with HERALD_GATEWAY_KEY; it is not set. Fix: set HERALD_GATEWAY_KEY to a long random string on the gateway and on every worker.",
    );
  }
  const modelProblem = config.providers.length ? undefined : modelConfigProblem(config.model);
  // One warning at start, not one per failed turn: a fresh install says what to set before anyone writes.
  if (modelProblem)
    logger.warn({ problem: modelProblem }, "no usable model configured: turns will fail until it is");
  for (const dir of [config.homeDir, join(config.homeDir, "cache"), join(config.homeDir, "logs")])
    mkdirSync(dir, { recursive: true });
}

/**
 * The agent side of the gateway and the plugins. On the embedded queue the turns run here: the agent
 * runtime consumes the queue (its tools are ready before the adapters start: loading them alongside
 * let a Matrix adapter stopped in that window leave an unhandled fetch abort behind). With REDIS_URL,
 * `herald worker` processes run the turns and reach state over the state API; they hear of a session's
 * end and of the reload commands, and the gateway loads the plugins only for their commands and hooks.
 */
async function attachAgent(
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
  if (announce) late.mcpServers = announceToWorkers(config, runner, announce, logger);
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
      loadServers: () => readMcpServers(config),
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
function startGatewayHousekeeping(
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

/** Herald's MCP server at `/mcp` of the API server. */
function mcpRoute(config: HeraldConfig, state: SqliteState, features: GatewayFeatures, logger: Logger) {
  return createMcpRoute(config, {
    state,
    runner: features.runner,
    cron: features.cron,
    parseChat: chatParser,
    version: heraldVersion(),
    logger,
  });
}

/**
 * The HTTP server, when something is to be served: the API, a worker's state API (Redis), the
 * dashboard, inbound webhooks, or a platform's webhook.
 */
async function startHttp(
  config: HeraldConfig,
  parts: {
    state: SqliteState;
    queue: JobQueue;
    logger: Logger;
    features: GatewayFeatures;
    api: ApiAdapter | undefined;
    started: ReadonlyMap<string, PlatformAdapter>;
    failed: ReadonlyMap<string, string>;
    dashboard: ReturnType<typeof createGatewayDashboard>;
  },
): Promise<HttpServerHandle | undefined> {
  const { state, logger, features, api, started, dashboard } = parts;
  const { webhooks, runner } = features;
  const redis = Boolean(config.queue.redisUrl);
  const adapterRoutes = [...started.values()].some((a) => a.handleHttp);
  if (
    !api &&
    !redis &&
    !dashboard &&
    !webhooks &&
    !adapterRoutes &&
    ![...started.values()].some((a) => a.handleWebhook)
  )
    return undefined;
  return startGatewayHttp(config, {
    logger,
    queue: parts.queue,
    adapters: runner.adapters,
    started,
    failed: parts.failed,
    metrics: features.metrics,
    api,
    nodeRoutes: [
      ...(webhooks ? [webhooks] : []),
      ...(dashboard ? [dashboard] : []),
      ...(api ? [mcpRoute(config, state, features, logger)] : []),
      ...[workspaceStoreRoute(config, state, logger)].filter((r) => r !== undefined),
      // Platforms with pages of their own (the web chat's /chat), as each runs at the request.
      {
        handleHttp: async (req, res, path) => {
          for (const adapter of runner.adapters.values())
            if (adapter.handleHttp && (await adapter.handleHttp(req, res, path))) return true;
          return false;
        },
      },
    ],
    stateApi: redis
      ? createStateApiRoute({
          state: features.localState,
          key: config.gatewayClient.key,
          logger,
          committed: () => state.committed(),
        })
      : undefined,
  });
}

/** The running gateway as its callers see it; `stop()` closes what it opened, in order, once. */
function gatewayHandle(
  config: HeraldConfig,
  parts: {
    state: SqliteState;
    queue: JobQueue;
    features: GatewayFeatures;
    agent: AgentRuntime | undefined;
    plugins: Plugins;
    api: ApiAdapter | undefined;
    chat: ChatPort;
    started: ReadonlyMap<string, PlatformAdapter>;
    failed: ReadonlyMap<string, string>;
    stops: {
      stopWatching: (() => void) | undefined;
      stopMaintenance: () => void;
      stopHousekeeping: (() => void) | undefined;
      dashboard: { close(): void } | undefined;
      http: HttpServerHandle | undefined;
    };
  },
): Gateway {
  const { state, queue, features, agent, started, stops } = parts;
  const { runner, cron, approvals, delegation, taskBoard } = features;
  let stopped = false;
  return {
    config,
    state,
    queue,
    runner,
    api: parts.api,
    http: stops.http,
    cron,
    learning: features.learning,
    delegation: {
      ...delegation,
      board: taskBoard.board,
      stateApis: { delegate: delegation.stateApi, taskBoard: taskBoard.stateApi },
    },
    plugins: parts.plugins,
    mcp: agent?.tools.mcp,
    tools: agent?.registry,
    chat: parts.chat,
    adapters: started,
    failed: parts.failed,
    async stop() {
      if (stopped) return;
      stopped = true;
      stops.stopWatching?.();
      approvals.stop();
      stops.stopMaintenance();
      stops.stopHousekeeping?.();
      stops.dashboard?.close();
      await stops.http?.close();
      await Promise.all([...started.values()].map((a) => a.stop().catch(() => undefined)));
      await cron.stop();
      await features.learning.stop();
      await runner.stop();
      await features.recall.stop();
      await features.memoryProviders.stop();
      delegation.close();
      await queue.close();
      await agent?.close();
      state.close();
    },
  };
}
