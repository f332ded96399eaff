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
import { createCatalog, modelConfigProblem, type ToolRegistry } from "../agent/index.js";
import type { Plugins } from "../agent/plugins/index.js";
import { createJobQueue } from "../agent/queue/index.js";
import type { McpManager } from "../agent/tools/mcp/index.js";
import type { TaskBoardStateApi } from "../agent/tools/task-board/index.js";
import { ConfigError, describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { JobQueue } from "../core/turn.js";
import type { PlatformAdapter } from "../core/types.js";
import type { HttpServerHandle } from "../gateway/http/index.js";
import { type GatewayRunner, startMaintenance } from "../gateway/index.js";
import type { CronService } from "../scheduler/index.js";
import { SqliteState, type SqliteTaskBoard } from "../sessions/index.js";
import type { AgentRuntime } from "./agent-runtime.js";
import { createChatPort } from "./chat-port.js";
import type { HeraldConfig } from "./config.js";
import { createAdapters, startAdapters } from "./gateway-adapters.js";
import { createGatewayFeatures, type GatewayFeatures, type LateParts } from "./gateway-features.js";

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
  const modelOf = (key: string) =>
    late.sessionModels?.modelOf(key) ?? config.model.default ?? config.model.name;
  const chat = createChatPort({ state, runner, queue, catalog: createCatalog(config), modelOf });
  // The adapters start first; the agent side (tools, the sandbox's check, plugins and their commands)
  // loads once they poll. Inbound messages wait for it, unconfirmed to their platform until recorded.
  const agentSide = settleLater();
  const { api, adapters, failed } = await createAdapters(config, {
    state,
    runner,
    chat,
    logger,
    extraAdapters: options.extraAdapters,
    localOnly: options.localOnly,
    menuReady: agentSide.settled,
  });
  const started = new Map<string, PlatformAdapter>();
  runner.start();
  delegation.resume();
  if (!options.localOnly) approvals.start();
  const stopMaintenance = startMaintenance({ state, logger: logger.child({ component: "maintenance" }) });
  await startAdapters(adapters, { runner, started, failed, logger, ready: agentSide.promise });
  const { agent, plugins } = await startAgentSide(config, features, {
    queue,
    logger,
    late,
    options,
    started,
    settle: agentSide,
  });
  const gatewayAgent = await import("./gateway-agent.js");
  const stopHousekeeping = gatewayAgent.startGatewayHousekeeping(config, state, agent, options, logger);
  // `herald chat` serves the tool but leaves firing to the gateway.
  if (!options.localOnly) await cron.start();

  const { dashboard, http } = options.localOnly
    ? { dashboard: undefined, http: undefined }
    : await (await import("./gateway-serve.js")).serveGateway(config, {
        state,
        queue,
        logger,
        features,
        api,
        started,
        failed,
      });
  if (http) logger.info({ url: http.url }, "http server listening");
  // After the API answers: MCP servers connect in the background, their tools appear as each is up.
  agent?.startMcp();
  logger.info({ adapters: [...started.keys()], failed: [...failed.keys()] }, "gateway ready");
  const stopWatching =
    redis && !options.localOnly
      ? (await import("./gateway-serve.js")).watchWorkers(queue, logger)
      : undefined;

  const stops = { stopWatching, stopMaintenance, stopHousekeeping, dashboard, http };
  return gatewayHandle(config, { state, queue, features, agent, plugins, api, chat, started, failed, stops });
}

/**
 * The agent side (gateway-agent.ts, imported now), settling `parts.settle` for the adapters' waiting
 * messages; if it fails, the adapters that started stop before the error goes on.
 */
async function startAgentSide(
  config: HeraldConfig,
  features: GatewayFeatures,
  parts: {
    queue: JobQueue;
    logger: Logger;
    late: LateParts;
    options: GatewayOptions;
    started: ReadonlyMap<string, PlatformAdapter>;
    settle: { resolve(): void; reject(err: unknown): void };
  },
): Promise<{ agent: AgentRuntime | undefined; plugins: Plugins }> {
  try {
    const { attachAgent } = await import("./gateway-agent.js");
    const attached = await attachAgent(config, features, parts);
    parts.settle.resolve();
    return attached;
  } catch (err) {
    parts.settle.reject(err);
    await Promise.all([...parts.started.values()].map((a) => a.stop().catch(() => undefined)));
    throw err;
  }
}

/**
 * A promise settled later, marked handled (a rejection reaches whoever awaits it, never the process),
 * and `settled`, which fulfils either way.
 */
function settleLater() {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  promise.catch(() => undefined);
  return { promise, resolve, reject, settled: promise.then(noop, noop) };
}

const noop = () => undefined;

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
