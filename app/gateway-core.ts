/**
 * The second step of `herald gateway`'s start (gateway-main.ts has the first): once the platform
 * adapters poll, the queue, the runner and its features (gateway-features.ts), the API server, the web
 * chat and the caller's adapters, the agent side on the embedded queue (gateway-agent.ts), the
 * dashboard and the HTTP server (gateway-serve.ts).
 */
import type { ApiAdapter } from "../adapters/api/index.js";
import type { ChatPort } from "../adapters/shared/index.js";
import { createCatalog, modelConfigProblem } from "../agent/index.js";
import type { Plugins } from "../agent/plugins/index.js";
import { createJobQueue } from "../agent/queue/index.js";
import type { Logger } from "../core/logger.js";
import type { JobQueue } from "../core/turn.js";
import type { PlatformAdapter } from "../core/types.js";
import type { HttpServerHandle } from "../gateway/http/index.js";
import { startMaintenance, turnIdFor } from "../gateway/index.js";
import type { SqliteState } from "../sessions/index.js";
import type { AgentRuntime } from "./agent-runtime.js";
import { createChatPort } from "./chat-port.js";
import { configuredPlatforms, type HeraldConfig } from "./config.js";
import { createPlatformAdapters, homeAssistantApi, startAdapters } from "./gateway-adapters.js";
import { createGatewayFeatures, type GatewayFeatures, type LateParts } from "./gateway-features.js";
import type { EarlyParts, Gateway, GatewayOptions } from "./gateway-main.js";

/** Builds the rest of the gateway around the adapters of the first step; resolves when it is ready. */
export async function finishGateway(config: HeraldConfig, early: EarlyParts): Promise<Gateway> {
  const { state, port, started, failed, agentSide, options } = early;
  const { logger } = options;
  const redis = Boolean(config.queue.redisUrl);
  warnOfModel(config, logger);
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
  port.bind(runner);
  for (const adapter of early.platforms)
    if (started.get(adapter.platform) === adapter) runner.addAdapter(adapter);
  const { api, adapters } = await createLateAdapters(config, { state, runner, chat, early });
  for (const adapter of adapters) runner.addAdapter(adapter);
  runner.start();
  delegation.resume();
  if (!options.localOnly) approvals.start();
  const stopMaintenance = startMaintenance({ state, logger: logger.child({ component: "maintenance" }) });
  await startAdapters(adapters, { handle: port.inbound(agentSide.promise), port, started, failed, logger });
  const { agent, plugins } = await startAgentSide(config, features, {
    queue,
    logger,
    late,
    options,
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

/** One warning at start, not one per failed turn: a fresh install says what to set before anyone writes. */
function warnOfModel(config: HeraldConfig, logger: Logger): void {
  const modelProblem = config.providers.length ? undefined : modelConfigProblem(config.model);
  if (modelProblem)
    logger.warn({ problem: modelProblem }, "no usable model configured: turns will fail until it is");
}

/**
 * The adapters built with the runner: the API server (when enabled), the caller's own adapters, and the
 * web chat (not with `localOnly`), which serves the runner's sessions and menu.
 */
async function createLateAdapters(
  config: HeraldConfig,
  parts: { state: SqliteState; runner: GatewayFeatures["runner"]; chat: ChatPort; early: EarlyParts },
): Promise<{ api: ApiAdapter | undefined; adapters: PlatformAdapter[] }> {
  const { state, runner, chat, early } = parts;
  const { logger } = early.options;
  // The API server's module loads only where it is enabled.
  const api = config.apiServer.enabled ? await apiAdapter(config, state, logger, chat) : undefined;
  // The web chat's services (and the modules they use) load only where such a platform is configured.
  const withRunner = !early.options.localOnly && configuredPlatforms(config).some((m) => m.withRunner);
  const webchat = withRunner
    ? await createPlatformAdapters(config, {
        state,
        port: early.port,
        logger,
        failed: early.failed,
        which: (module) => module.withRunner === true,
        services: {
          webchat: (await import("./web-chat.js")).createWebChatServices(config, { state, runner, chat }),
          homeAssistantApi: homeAssistantApi(config),
        },
        menuReady: early.agentSide.settled,
      })
    : [];
  return { api, adapters: [...(api ? [api] : []), ...(early.options.extraAdapters ?? []), ...webchat] };
}

/**
 * The agent side (gateway-agent.ts, imported now), settling `parts.settle` for the adapters' waiting
 * messages.
 */
async function startAgentSide(
  config: HeraldConfig,
  features: GatewayFeatures,
  parts: {
    queue: JobQueue;
    logger: Logger;
    late: LateParts;
    options: GatewayOptions;
    settle: { resolve(): void; reject(err: unknown): void };
  },
): Promise<{ agent: AgentRuntime | undefined; plugins: Plugins }> {
  const { attachAgent } = await import("./gateway-agent.js");
  const attached = await attachAgent(config, features, parts);
  parts.settle.resolve();
  return attached;
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

/** The OpenAI-compatible API server, reporting each reply's token usage from the usage ledger. */
async function apiAdapter(
  config: HeraldConfig,
  state: SqliteState,
  logger: Logger,
  chat: ChatPort,
): Promise<ApiAdapter> {
  const { createApiAdapter } = await import("../adapters/api/index.js");
  return createApiAdapter(
    {
      key: config.apiServer.key,
      modelName: config.model.default ?? config.model.name,
      usageOf: (messageId) => {
        const lines = state.usage.forTurn(turnIdFor("api", messageId));
        if (lines.length === 0) return undefined;
        return {
          promptTokens: lines.reduce((n, l) => n + l.promptTokens, 0),
          completionTokens: lines.reduce((n, l) => n + l.completionTokens, 0),
          cachedTokens: lines.reduce((n, l) => n + l.cachedTokens, 0),
        };
      },
      chat,
      responses: state.responses,
      responsesTtlMs: config.apiServer.responsesTtlDays * 86_400_000,
    },
    { logger },
  );
}
