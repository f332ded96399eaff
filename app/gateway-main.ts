/**
 * The composition root of `herald gateway`: opens state, builds the queue, the runner, the API server,
 * the configured platform adapters and the HTTP server, and (on the embedded queue) the agent workers.
 * The only place where concrete classes are wired together.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type ApiAdapter, createApiAdapter } from "../adapters/api/index.js";
import { createWebhooks } from "../adapters/webhooks/index.js";
import { createCatalog, createConfiguredModelClient } from "../agent/configured-model.js";
import { createDelegation, type Delegation } from "../agent/delegate/gateway.js";
import { createApprovals } from "../agent/exec/approvals/index.js";
import { startHousekeeping, startWorkspaceHeartbeat, workspaceHousekeeping } from "../agent/exec/index.js";
import { createLearning, type Learning } from "../agent/learning.js";
import { modelConfigProblem } from "../agent/model-config.js";
import { createPersona } from "../agent/persona/gateway.js";
import { attachPlugins } from "../agent/plugins/index.js";
import { createProviders, type SessionModels } from "../agent/providers/index.js";
import { createJobQueue } from "../agent/queue/index.js";
import { createSessionCompressor } from "../agent/session-compressor.js";
import type { ToolRegistry } from "../agent/tool-registry.js";
import { type McpManager, type McpServerConfig, mcpCommands } from "../agent/tools/mcp/index.js";
import { memoryTool } from "../agent/tools/memory/index.js";
import { createMessageSender } from "../agent/tools/messaging/gateway.js";
import { skillsTools } from "../agent/tools/skills/index.js";
import { createTaskBoard } from "../agent/tools/task-board/gateway.js";
import { createTodo } from "../agent/tools/todo/gateway.js";
import { createVoiceReplies } from "../agent/tools/voice/gateway.js";
import { isLoopbackHost } from "../agent/tools/web/index.js";
import type { DelegateStateApi, TaskBoardStateApi } from "../agent/types.js";
import { createTurnHandler } from "../agent/worker.js";
import { ConfigError, describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { JobQueue } from "../core/turn.js";
import type { AdapterDeps, PlatformAdapter } from "../core/types.js";
import { createGatewayDashboard } from "../gateway/dashboard/index.js";
import type { HttpServerHandle } from "../gateway/http/index.js";
import { watchWorkers } from "../gateway/http/index.js";
import { filesInUse, startMaintenance } from "../gateway/maintenance.js";
import { createMcpRoute } from "../gateway/mcp-server/index.js";
import { createGatewayMetrics } from "../gateway/metrics.js";
import { GatewayRunner, turnIdFor } from "../gateway/runner.js";
import { createCronService } from "../scheduler/gateway.js";
import type { CronService } from "../scheduler/index.js";
import { SqliteState, type SqliteTaskBoard } from "../sessions/index.js";
import { announceToWorkers, readMcpServers } from "./announcements.js";
import { configuredPlatforms, type HeraldConfig, sectionOf } from "./config.js";
import { startGatewayHttp } from "./http-server.js";
import { chatParser, platformHints, platformModules, userIdNormalisers } from "./platforms.js";
import { createPlugins, type Plugins } from "./plugins.js";
import { createStateApiRoute } from "./state-api.js";
import { createLocalStateClient } from "./state-client.js";
import { createAgentTools, createToolRegistry } from "./tools.js";
import { eagerToolsetsFor, jobToolsetLimit, toolsetsOfCaller } from "./toolsets.js";
import { heraldVersion } from "./version.js";

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
  learning: Learning;
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
  if (redis && !config.gatewayClient.key) {
    throw new ConfigError(
      "HERALD_GATEWAY_KEY",
      "REDIS_URL is set, so turns run on `herald worker` processes, which reach the gateway's state API with HERALD_GATEWAY_KEY; it is not set. Fix: set HERALD_GATEWAY_KEY to a long random string on the gateway and on every worker.",
    );
  }
  const modelProblem = config.providers.length ? undefined : modelConfigProblem(config.model);
  // One warning at start, not one per failed turn: a fresh install says what to set before anyone writes.
  if (modelProblem)
    logger.warn({ problem: modelProblem }, "no usable model configured: turns will fail until it is");
  const cacheDir = join(config.homeDir, "cache");
  for (const dir of [config.homeDir, cacheDir, join(config.homeDir, "logs")])
    mkdirSync(dir, { recursive: true });

  const state = SqliteState.open(join(config.homeDir, "state.db"), {
    groupMode: config.sessions.groupSessions,
    // This process is the one writer: commits are batched and recent histories stay in memory.
    groupCommit: true,
    historyCacheBytes: 4 * 1024 * 1024,
    onEffectError: (err) => logger.error({ error: describeError(err) }, "an effect after commit failed"),
  });
  const platforms = platformModules.map((m) => m.name);
  const queue = await createJobQueue(config, logger.child({ component: "queue" }));
  const persona = createPersona(config, { state, logger });
  const learning = createLearning(config, {
    state,
    logger,
    model: createConfiguredModelClient(config, { retryBaseDelayMs: options.retryBaseDelayMs }),
    reviewTools: createToolRegistry([memoryTool, ...skillsTools]),
    stateClient: (members) => createLocalStateClient(state, members),
    hints: platformHints,
    persona,
  });
  // Loaded below, once the tools exist; the runner asks through this port.
  let plugins: Plugins | undefined;
  // Set right after the runner exists, before any turn starts (the context source runs at dispatch).
  let sessionModels: SessionModels | undefined;
  const runner = new GatewayRunner({
    inboundHook: {
      active: () => plugins?.hooks.has("inbound") ?? false,
      run: async (message) => (plugins ? plugins.hooks.inbound(message) : message),
    },
    config,
    state,
    queue,
    logger,
    // On Redis the workers run the turns; BullMQ limits the re-runs of a job whose worker died.
    turnsRunHere: !redis,
    userIds: userIdNormalisers,
    modelName: (key) => sessionModels?.modelOf(key) ?? config.model.default ?? config.model.name,
    compress: createSessionCompressor(config, {
      state,
      logger: logger.child({ component: "compress" }),
      retryBaseDelayMs: options.retryBaseDelayMs,
    }),
    context: (turn, chatType) => ({
      history: state.sessions.load(turn.sessionId).map((m) => ({ seq: m.seq, message: m.message })),
      systemPrompt: learning.systemPrompt(turn, chatType),
      toolsets: toolsetsOfCaller(config, runner.access, turn, chatType, mcpServers()),
      eagerToolsets: eagerToolsetsFor(config, turn.chat.platform, chatType),
      voiceReply: voice.voiceReplyOf(turn),
      ...sessionModels?.forTurn(turn),
    }),
  });
  const voice = createVoiceReplies(config, { gateway: runner });
  learning.attach(runner);
  runner.commands.add(persona.commands(learning.refreshPrompt));
  // The MCP servers a turn may get: the running set (after /reload-mcp), else the configured one.
  let mcpServers = (): readonly McpServerConfig[] => config.mcpServers;

  const cron = createCronService(
    config,
    { gateway: runner, database: state.database, platforms, parseChat: chatParser, logger },
    { toolsetLimit: jobToolsetLimit(config, runner.access, state.sessions, () => mcpServers()) },
  );
  const webhooks = options.localOnly
    ? undefined
    : createWebhooks(config, { gateway: runner, platforms, parseChat: chatParser, logger });

  const approvals = createApprovals(config, { gateway: runner, logger });
  const delegation = createDelegation(config, { gateway: runner, state, queue, logger });
  const taskBoard = createTaskBoard(config, { gateway: runner, state });
  const localState = createLocalStateClient(state, {
    cron: cron.api,
    approvals: approvals.stateApi,
    chat: {
      notify: async (chat, text) => runner.control.notify(chat, text),
      send: createMessageSender(config, {
        gateway: runner,
        database: state.database,
        platforms,
        parseChat: chatParser,
      }),
    },
    todo: createTodo({ gateway: runner }).stateApi,
    delegate: delegation.stateApi,
    taskBoard: taskBoard.stateApi,
    ...learning.stateApis,
  });
  const metrics = createGatewayMetrics(runner, queue);
  sessionModels = createProviders(config, {
    gateway: runner,
    state,
    catalog: createCatalog(config),
    metrics,
    logger,
  });
  // With REDIS_URL, `herald worker` processes run the turns and reach state over the state API. The
  // tools are ready before the adapters start: loading them alongside let a Matrix adapter stopped in
  // that window leave an unhandled fetch abort behind.
  const tools = redis ? undefined : await createAgentTools(config, logger.child({ component: "tools" }));
  // On Redis the workers run the tools: they hear of a session's end and of the reload commands.
  const announce = tools ? undefined : queue.announce?.bind(queue);
  plugins = await createPlugins(config, logger, tools);
  attachPlugins(plugins, {
    gateway: runner,
    logger,
    announceReload: announce && (() => announce({ type: "reload", what: "plugins" })),
  });
  if (announce) mcpServers = announceToWorkers(config, runner, announce, logger);
  const registry = tools ? plugins.registry(tools.registry) : undefined;
  if (tools && registry) {
    // The embedded gateway runs them here.
    runner.sessionEnded.add((ended) => {
      tools
        .endSession(ended.key)
        .catch((err: unknown) =>
          logger.warn({ error: describeError(err) }, "could not end the background processes of a session"),
        );
    });
    const mcp = tools.mcp;
    mcpServers = () => mcp.servers().map((s) => s.config);
    runner.commands.add(
      mcpCommands({
        target: { type: "here", manager: mcp },
        loadServers: () => readMcpServers(config),
        notify: (chat, text) => runner.control.notify(chat, text),
        logger: logger.child({ component: "mcp" }),
      }),
    );
    const handler = createTurnHandler({
      model: createConfiguredModelClient(config, { retryBaseDelayMs: options.retryBaseDelayMs }),
      compressionModel: config.auxiliary.compression,
      tools: registry,
      hooks: plugins.hooks,
      stageAttachments: tools.stageAttachments,
      transcribe: tools.transcribe,
      speakReply: tools.speakReply,
      state: localState,
      logger: logger.child({ component: "agent" }),
      homeDir: config.homeDir,
    });
    await queue.consume(handler, { concurrency: config.queue.concurrency });
  }

  const api = config.apiServer.enabled
    ? createApiAdapter(
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
        },
        { logger },
      )
    : undefined;
  const adapters: PlatformAdapter[] = [...(api ? [api] : []), ...(options.extraAdapters ?? [])];
  const failed = new Map<string, string>();
  if (!options.localOnly) {
    for (const module of configuredPlatforms(config)) {
      const platform = module.name;
      try {
        const deps: AdapterDeps = {
          logger: logger.child({ adapter: platform }),
          homeDir: config.homeDir,
          cacheDir,
          kv: state.kv(platform),
          mediaMaxBytes: config.media.maxBytes,
          isAllowed: (userId: string) => runner.access.isAllowed(platform, userId),
          isAddressed: (message) => runner.isAddressed(message),
          commandMenu: () => runner.commands.menu(),
        };
        adapters.push(await module.create(sectionOf(config, module), deps));
      } catch (err) {
        failed.set(platform, describeError(err));
        logger.error({ platform, error: describeError(err) }, "adapter could not be created");
      }
    }
  }
  for (const adapter of adapters) runner.addAdapter(adapter);
  const started = new Map<string, PlatformAdapter>();
  const dashboard = options.localOnly
    ? undefined
    : createGatewayDashboard(config, {
        state,
        runner,
        queue,
        cron,
        approvals,
        learning,
        adapters: started,
        failed,
        loopbackServer: isLoopbackHost(config.apiServer.host),
        logger,
      });
  runner.start();
  delegation.resume();
  if (!options.localOnly) approvals.start();
  const stopMaintenance = startMaintenance({ state, logger: logger.child({ component: "maintenance" }) });
  // Old workspaces (where this process runs the turns; on Redis the workers prune them) and old cache and
  // media files, never one an open turn or an undelivered reply names. `herald chat`, which may run beside
  // a gateway, prunes nothing but marks the workspaces of its background processes used, as a gateway does.
  const workspaces = tools && workspaceHousekeeping(config, tools);
  const housekeepingLog = logger.child({ component: "housekeeping" });
  const stopHousekeeping = options.localOnly
    ? workspaces && startWorkspaceHeartbeat(workspaces, housekeepingLog)
    : startHousekeeping({
        cacheDir,
        mediaRetentionMs: config.media.retentionDays * 86_400_000,
        inUse: () => filesInUse(state),
        workspaces,
        logger: housekeepingLog,
      });

  await Promise.all(
    adapters.map(async (adapter) => {
      try {
        await adapter.start(runner.handleInbound);
        started.set(adapter.platform, adapter);
      } catch (err) {
        failed.set(adapter.platform, describeError(err));
        runner.adapters.delete(adapter.platform);
        logger.error({ platform: adapter.platform, error: describeError(err) }, "adapter failed to start");
      }
    }),
  );

  // `herald chat` serves the tool but leaves firing to the gateway.
  if (!options.localOnly) await cron.start();

  const http =
    options.localOnly ||
    (!api && !redis && !dashboard && !webhooks && ![...started.values()].some((a) => a.handleWebhook))
      ? undefined
      : await startGatewayHttp(config, {
          logger,
          queue,
          adapters: runner.adapters,
          started,
          failed,
          metrics,
          api,
          nodeRoutes: [
            ...(webhooks ? [webhooks] : []),
            ...(dashboard ? [dashboard] : []),
            ...(api
              ? [
                  createMcpRoute(config, {
                    state,
                    runner,
                    cron,
                    parseChat: chatParser,
                    version: heraldVersion(),
                    logger,
                  }),
                ]
              : []),
          ],
          stateApi: redis
            ? createStateApiRoute({
                state: localState,
                key: config.gatewayClient.key,
                logger,
                committed: () => state.committed(),
              })
            : undefined,
        });
  if (http) logger.info({ url: http.url }, "http server listening");
  // After the API answers: MCP servers connect in the background, their tools appear as each is up.
  tools?.mcp.start();
  logger.info({ adapters: [...started.keys()], failed: [...failed.keys()] }, "gateway ready");
  const stopWatching = redis && !options.localOnly ? watchWorkers(queue, logger) : undefined;

  let stopped = false;
  return {
    config,
    state,
    queue,
    runner,
    api,
    http,
    cron,
    learning,
    delegation: {
      ...delegation,
      board: taskBoard.board,
      stateApis: { delegate: delegation.stateApi, taskBoard: taskBoard.stateApi },
    },
    plugins,
    mcp: tools?.mcp,
    tools: registry,
    adapters: started,
    failed,
    async stop() {
      if (stopped) return;
      stopped = true;
      stopWatching?.();
      approvals.stop();
      stopMaintenance();
      stopHousekeeping?.();
      dashboard?.close();
      await http?.close();
      await Promise.all([...started.values()].map((a) => a.stop().catch(() => undefined)));
      await cron.stop();
      await learning.stop();
      await runner.stop();
      delegation.close();
      await queue.close();
      await tools?.close();
      state.close();
    },
  };
}
