/**
 * The gateway's runner and the features wired onto it (part of `herald gateway`'s composition root):
 * the turn context (history, prompt, toolsets, voice mode, the session's model), persona, memory and
 * skills, voice replies, cron, inbound webhooks, approvals, delegation, the task board, plans,
 * send_message, providers and the metrics, and the in-process `StateClient` over all of them. Each
 * feature is built by its own folder's `create<Feature>(config, ports)`; this file only passes the
 * parts.
 */
import { createWebhooks } from "../adapters/webhooks/index.js";
import { createDelegation, type Delegation } from "../agent/delegate/index.js";
import { type Approvals, createApprovals } from "../agent/exec/approvals/index.js";
import { sandboxUsage } from "../agent/exec/gateway.js";
import {
  createCatalog,
  createConfiguredModelClient,
  createSessionCompressor,
  type StateClient,
} from "../agent/index.js";
import { createLearning, type Learning } from "../agent/learning/index.js";
import { createPersona } from "../agent/persona/index.js";
import type { Plugins } from "../agent/plugins/index.js";
import { createProviders, type SessionModels } from "../agent/providers/index.js";
import { createCheckpoints } from "../agent/tools/checkpoints/gateway.js";
import { cacheKeys, jsonToolCache, type McpServerConfig } from "../agent/tools/mcp/index.js";
import { memoryTool } from "../agent/tools/memory/index.js";
import { createMemoryProviders, type MemoryProviders } from "../agent/tools/memory-providers/gateway.js";
import { createMessageSender } from "../agent/tools/messaging/gateway.js";
import { createRecall, type Recall, recallPrefetch } from "../agent/tools/session-search/gateway.js";
import { skillsTools } from "../agent/tools/skills/index.js";
import { createTaskBoard } from "../agent/tools/task-board/gateway.js";
import { createTodo } from "../agent/tools/todo/gateway.js";
import { createVoiceReplies } from "../agent/tools/voice/gateway.js";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { MetricsRegistry } from "../core/metrics.js";
import type { JobQueue } from "../core/turn.js";
import { AgentRouter, agentCommands, createGatewayMetrics, GatewayRunner } from "../gateway/index.js";
import { type CronService, createCronService } from "../scheduler/index.js";
import { SqliteMcpToolCache, type SqliteState, type SqliteTaskBoard } from "../sessions/index.js";
import { agentProfiles, profileOfKey } from "./agents.js";
import type { HeraldConfig } from "./config.js";
import { chatParser, platformHints, platformModules, userIdNormalisers } from "./platforms.js";
import { skillDownload } from "./skill-download.js";
import { createLocalStateClient, type StateMembers } from "./state-client.js";
import { createToolRegistry } from "./tool-registry.js";
import { eagerToolsetsFor, jobToolsetLimit, toolsetsOfCaller } from "./toolsets.js";

/** Parts the runner asks for through ports, set once they exist (before any turn starts). */
export interface LateParts {
  /** Loaded once the tools exist. */
  plugins?: Plugins | undefined;
  /** The session's model settings, set right after the runner exists. */
  sessionModels?: SessionModels | undefined;
  /** The MCP servers a turn may get: the running set (after /reload-mcp), else the configured one. */
  mcpServers: () => readonly McpServerConfig[];
  /** The external memory providers, set right after the runner exists. */
  memoryProviders?: MemoryProviders | undefined;
}

/** What the gateway's features are built on. */
export interface FeatureParts {
  state: SqliteState;
  queue: JobQueue;
  logger: Logger;
  late: LateParts;
  /** Overrides the model client's retry timing (tests). */
  retryBaseDelayMs?: number | undefined;
  /** `herald chat`: no inbound webhooks. */
  localOnly?: boolean | undefined;
}

/** The runner and the features on it. */
export interface GatewayFeatures {
  runner: GatewayRunner;
  learning: Learning;
  cron: CronService;
  webhooks: ReturnType<typeof createWebhooks>;
  approvals: Approvals;
  delegation: Delegation;
  taskBoard: { board: SqliteTaskBoard; stateApi: NonNullable<StateClient["taskBoard"]> };
  metrics: MetricsRegistry;
  /** `session_search` on the gateway: keywords, and meaning with an embeddings endpoint. */
  recall: Recall;
  /** The external memory providers (none configured: every member answers "none"). */
  memoryProviders: MemoryProviders;
  /** The in-process StateClient the embedded agent and the state API serve. */
  localState: StateClient;
  /**
   * Deletes the cached tool lists of every MCP server but `servers` as they are configured (called at
   * start and on `/reload-mcp`). Never throws: a failure is logged.
   */
  retainMcpServers(servers: readonly McpServerConfig[]): void;
}

/** Builds the runner and every feature on it. Call before `runner.start()`. */
export function createGatewayFeatures(config: HeraldConfig, parts: FeatureParts): GatewayFeatures {
  const { state, queue, logger, late } = parts;
  const platforms = platformModules.map((m) => m.name);
  const { runner, learning } = createRunner(config, parts);
  const cron = createCronService(
    config,
    { gateway: runner, database: state.database, platforms, parseChat: chatParser, logger },
    { toolsetLimit: jobToolsetLimit(config, runner.access, state.sessions, () => late.mcpServers()) },
  );
  const webhooks = parts.localOnly
    ? undefined
    : createWebhooks(config, { gateway: runner, platforms, parseChat: chatParser, logger });
  const approvals = createApprovals(config, { gateway: runner, logger });
  const delegation = createDelegation(config, { gateway: runner, state, queue, logger });
  const taskBoard = createTaskBoard(config, { gateway: runner, state });
  createCheckpoints(config, { gateway: runner, logger });
  const send = createMessageSender(config, {
    gateway: runner,
    database: state.database,
    platforms,
    parseChat: chatParser,
  });
  const recall = createRecall(config, { gateway: runner, state, logger });
  const memoryProviders = createMemoryProviders(config, { gateway: runner, state, logger });
  late.memoryProviders = memoryProviders;
  const mcpToolCache = new SqliteMcpToolCache(state.database);
  const retainMcpServers = (servers: readonly McpServerConfig[]) => {
    try {
      const gone = mcpToolCache.retain(cacheKeys(servers));
      if (gone.length)
        logger.info({ servers: gone }, "cached mcp tool lists of unconfigured servers deleted");
    } catch (err) {
      logger.warn({ error: describeError(err) }, "cached mcp tool lists not pruned");
    }
  };
  retainMcpServers(config.mcpServers);
  const localState = createLocalStateClient(
    state,
    {
      cron: cron.api,
      approvals: approvals.stateApi,
      chat: { notify: async (chat, text) => runner.control.notify(chat, text), send },
      todo: createTodo({ gateway: runner }).stateApi,
      delegate: delegation.stateApi,
      taskBoard: taskBoard.stateApi,
      memoryProviders: memoryProviders.stateApi,
      mcpTools: jsonToolCache(mcpToolCache),
      ...learning.stateApis,
    } satisfies StateMembers,
    recall.search,
  );
  const metrics = createGatewayMetrics(runner, queue);
  const catalog = createCatalog(config);
  late.sessionModels = createProviders(config, {
    gateway: runner,
    state,
    catalog,
    metrics,
    logger,
    extraUsage: sandboxUsage(config),
  });
  return {
    runner,
    learning,
    cron,
    webhooks,
    approvals,
    delegation,
    taskBoard,
    metrics,
    recall,
    memoryProviders,
    localState,
    retainMcpServers,
  };
}

/** The runner with its turn context, and what the context reads: persona, learning, voice replies. */
function createRunner(
  config: HeraldConfig,
  parts: FeatureParts,
): { runner: GatewayRunner; learning: Learning } {
  const { state, queue, logger, late } = parts;
  const retryBaseDelayMs = parts.retryBaseDelayMs;
  const agents = agentProfiles(config);
  const persona = createPersona(config, { state, logger, agents });
  const learning = createLearning(config, {
    state,
    logger,
    model: createConfiguredModelClient(config, { retryBaseDelayMs }),
    reviewTools: createToolRegistry([memoryTool, ...skillsTools]),
    stateClient: (members) => createLocalStateClient(state, members),
    download: skillDownload(config),
    hints: platformHints,
    persona,
    agentMemoryDir: (name) => agents.get(name)?.memoryDir,
    agentSkillsDirs: new Map([...agents.values()].map((a) => [a.name, a.skillsDir])),
  });
  const router = new AgentRouter({
    agents: [...agents.keys()],
    routes: config.routes,
    choices: state.kv("agent-choices"),
    parseChat: chatParser,
  });
  const models = () => late.sessionModels;
  const runner: GatewayRunner = new GatewayRunner({
    inboundHook: {
      active: () => late.plugins?.hooks.has("inbound") ?? false,
      run: async (message) => (late.plugins ? late.plugins.hooks.inbound(message) : message),
    },
    config,
    state,
    queue,
    logger,
    // On Redis the workers run the turns; BullMQ limits the re-runs of a job whose worker died.
    turnsRunHere: !config.queue.redisUrl,
    userIds: userIdNormalisers,
    agentOf: (message) => router.agentOf(message),
    modelName: (key) => {
      const own = profileOfKey(agents, key)?.model;
      return models()?.modelOf(key, own) ?? own ?? config.model.default ?? config.model.name;
    },
    compress: createSessionCompressor(config, {
      state,
      logger: logger.child({ component: "compress" }),
      retryBaseDelayMs,
    }),
    context: (turn, chatType) => {
      const agent = profileOfKey(agents, turn.sessionKey);
      const chosen = models()?.forTurn(turn);
      return {
        history: state.sessions.load(turn.sessionId).map((m) => ({ seq: m.seq, message: m.message })),
        systemPrompt: learning.systemPrompt(turn, chatType),
        toolsets: toolsetsOfCaller(config, runner.access, turn, chatType, late.mcpServers(), agent?.toolsets),
        eagerToolsets: eagerToolsetsFor(config, turn.chat.platform, chatType),
        voiceReply: voice.voiceReplyOf(turn),
        recall: recallPrefetch(config.embeddings, turn.chat.platform, turn.input),
        insights: late.memoryProviders?.insightsFor(turn, chatType),
        ...chosen,
        // The session's /model choice, else its agent's model, else the configured default.
        model: chosen?.model ?? agent?.model,
      };
    },
  });
  const voice = createVoiceReplies(config, { gateway: runner });
  learning.attach(runner);
  runner.commands.add(persona.commands(learning.refreshPrompt));
  runner.commands.add(
    agentCommands({
      router,
      keyOf: (message, agent) => runner.keyOf(message, agent),
      reset: (key) => runner.control.reset(key),
    }),
  );
  return { runner, learning };
}
