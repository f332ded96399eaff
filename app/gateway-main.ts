/**
 * The composition root of `herald gateway`, in two steps. First what the first poll needs: the state and
 * the platform adapters (gateway-adapters.ts), started against a port that stands in for the runner.
 * Then, once they poll, gateway-core.ts: the queue, the runner and its features (gateway-features.ts),
 * the agent side (gateway-agent.ts), the API server and the web chat, the dashboard and the HTTP server.
 * Inbound messages wait for the second step, unconfirmed to their platform until the runner records
 * them. The only place where concrete classes are wired together.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { ApiAdapter } from "../adapters/api/index.js";
import type { ChatPort } from "../adapters/shared/index.js";
import type { DelegateStateApi, Delegation } from "../agent/delegate/index.js";
import type { ToolRegistry } from "../agent/index.js";
import type { Plugins } from "../agent/plugins/index.js";
import type { McpManager } from "../agent/tools/mcp/index.js";
import type { TaskBoardStateApi } from "../agent/tools/task-board/index.js";
import { ConfigError, describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { JobQueue } from "../core/turn.js";
import type { PlatformAdapter } from "../core/types.js";
import type { HttpServerHandle } from "../gateway/http/index.js";
import type { GatewayRunner } from "../gateway/index.js";
import type { CronService } from "../scheduler/index.js";
import { SqliteState, type SqliteTaskBoard } from "../sessions/index.js";
import type { HeraldConfig } from "./config.js";
import { createPlatformAdapters, homeAssistantApi, RunnerPort, startAdapters } from "./gateway-adapters.js";
import type { GatewayFeatures } from "./gateway-features.js";

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

/**
 * Starts everything `herald gateway` runs. Adapters that fail to start are logged; the rest run on. If
 * the rest of the gateway fails to start, the adapters that started stop before the error goes on.
 */
export async function startGateway(config: HeraldConfig, options: GatewayOptions): Promise<Gateway> {
  const { logger } = options;
  prepareStart(config);
  const state = SqliteState.open(join(config.homeDir, "state.db"), {
    groupMode: config.sessions.groupSessions,
    // This process is the one writer: commits are batched and recent histories stay in memory.
    groupCommit: true,
    historyCacheBytes: 4 * 1024 * 1024,
    onEffectError: (err) => logger.error({ error: describeError(err) }, "an effect after commit failed"),
  });
  const port = new RunnerPort(config, state);
  // Settles once the agent side (tools, the sandbox's check, plugins and their commands) is loaded.
  const agentSide = settleLater();
  const started = new Map<string, PlatformAdapter>();
  const failed = new Map<string, string>();
  // A platform that serves the runner's services (the web chat) starts with it, in the second step.
  const platforms = options.localOnly
    ? []
    : await createPlatformAdapters(config, {
        state,
        port,
        logger,
        failed,
        which: (module) => !module.withRunner,
        services: { homeAssistantApi: homeAssistantApi(config) },
        menuReady: agentSide.settled,
      });
  await startAdapters(platforms, { handle: port.inbound(agentSide.promise), port, started, failed, logger });
  try {
    const { finishGateway } = await import("./gateway-core.js");
    return await finishGateway(config, { state, port, platforms, started, failed, agentSide, options });
  } catch (err) {
    agentSide.reject(err);
    await Promise.all([...started.values()].map((a) => a.stop().catch(() => undefined)));
    throw err;
  }
}

/** What the first step hands the second. */
export interface EarlyParts {
  state: SqliteState;
  port: RunnerPort;
  /** The platform adapters created in the first step (started or not). */
  platforms: readonly PlatformAdapter[];
  started: Map<string, PlatformAdapter>;
  failed: Map<string, string>;
  agentSide: ReturnType<typeof settleLater>;
  options: GatewayOptions;
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

/** Refuses a Redis gateway without the state API's key, makes the folders. */
function prepareStart(config: HeraldConfig): void {
  if (config.queue.redisUrl && !config.gatewayClient.key) {
    throw new ConfigError(
      "HERALD_GATEWAY_KEY",
      "REDIS_URL is set, so turns run on `herald worker` processes, which reach the gateway's state API with HERALD_GATEWAY_KEY; it is not set. Fix: set HERALD_GATEWAY_KEY to a long random string on the gateway and on every worker.",
    );
  }
  for (const dir of [config.homeDir, join(config.homeDir, "cache"), join(config.homeDir, "logs")])
    mkdirSync(dir, { recursive: true });
}
