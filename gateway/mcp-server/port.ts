/**
 * The port Herald's MCP server serves, over the gateway's state, runner and cron service (mounted at
 * `/mcp` on the API server), and the read-only port of `herald mcp serve` while no gateway runs.
 */
import type { DeliveryRule } from "../../core/access.js";
import { HeraldError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { TurnControl } from "../../core/turn.js";
import type { ChatRef } from "../../core/types.js";
import { type CronService, jobView, SqliteCronStore } from "../../scheduler/index.js";
import type { SqliteState } from "../../sessions/index.js";
import { createMcpHttpRoute } from "./http.js";
import type { HeraldMcpPort } from "./types.js";

/** Sends by idempotency key (kv namespace): a key seen before queues nothing. */
const SENDS_NAMESPACE = "mcp-sends";
/**
 * Who calls over MCP: the holder of `API_SERVER_KEY` (the endpoint is off without it), an owner by the
 * owner policy. Jobs added over MCP belong to it.
 */
const MCP_CALLER = { chat: { platform: "mcp", chatId: "owner" }, userId: "mcp" };

/** The settings the port reads (`HeraldConfig` has this shape). */
export interface McpPortConfig {
  timezone: string;
}

/** What the port is built on. */
export interface McpPortParts {
  state: SqliteState;
  /** The gateway's runner (`GatewayRunner` has this shape). */
  runner: {
    access: DeliveryRule;
    control: Pick<TurnControl, "isRunning" | "notify">;
    adapters: ReadonlyMap<string, unknown>;
  };
  cron: Pick<CronService, "api">;
  /** Parses a chat string with every platform's chat-id rules. */
  parseChat: (value: string) => ChatRef | undefined;
}

/** The reading half of the port, over a state file (the gateway's connection or one of our own). */
function readPort(
  config: McpPortConfig,
  state: SqliteState,
): Pick<HeraldMcpPort, "listSessions" | "searchSessions" | "readSession" | "listCronJobs"> {
  const store = SqliteCronStore.on(state.database);
  return {
    listSessions: (options) => state.sessions.list(options),
    searchSessions: (query, options) => state.sessions.search(query, options),
    readSession(id, { limit }) {
      const session = state.sessions.get(id);
      return session ? { session, messages: state.sessions.load(id).slice(-limit) } : undefined;
    },
    listCronJobs: () =>
      store.listJobs().map((job) => jobView(job, store.runs(job.id, 1)[0], config.timezone)),
  };
}

/** The port the MCP tools use, over the gateway's parts. */
export function createMcpPort(config: McpPortConfig, parts: McpPortParts): HeraldMcpPort {
  const { state, runner, cron, parseChat: chatParser } = parts;
  const sends = state.kv(SENDS_NAMESPACE);
  const invalid = (message: string) => new HeraldError(message, { code: "invalid_input" });
  return {
    ...readPort(config, state),
    sendMessage(target, text, idempotencyKey) {
      const chat = chatParser(target);
      if (!chat)
        throw invalid(`'${target}' is not a chat: give platform:chatId[:threadId], e.g. telegram:123456.`);
      runner.access.checkDelivery(MCP_CALLER, target, chat);
      if (!runner.control.isRunning(chat.platform)) {
        const running = [...runner.adapters.keys()].join(", ") || "none";
        throw invalid(`Herald is not running on ${chat.platform} (running: ${running}).`);
      }
      // The key and the outbox item commit together: a retried call finds the key and sends nothing.
      return state.transaction(() => {
        if (idempotencyKey && sends.get(idempotencyKey)) return { duplicate: true };
        if (idempotencyKey) sends.set(idempotencyKey, JSON.stringify({ chat: target, at: Date.now() }));
        runner.control.notify(chat, text);
        return { duplicate: false };
      });
    },
    async addCronJob(input) {
      if (input.deliver.split(",").some((t) => t.trim() === "origin")) {
        throw invalid(
          "'origin' means the chat a job was made in, and MCP is not a chat: name a target (telegram:123456, email:you@example.org, local).",
        );
      }
      return cron.api.create(input, MCP_CALLER);
    },
  };
}

/**
 * The port of `herald mcp serve` while no gateway runs: reading straight from `state.db`; sending and
 * adding jobs need the gateway (the one process that delivers and fires) and say so.
 */
export function createOfflineMcpPort(config: McpPortConfig, state: SqliteState): HeraldMcpPort {
  const offline = (what: string) =>
    new HeraldError(
      `Herald's gateway is not running, so ${what}. Start it with \`herald gateway\`, then restart \`herald mcp serve\` (your editor's MCP reconnect).`,
      { code: "state_error", retryable: true },
    );
  return {
    ...readPort(config, state),
    sendMessage() {
      throw offline("nothing can be sent");
    },
    async addCronJob() {
      throw offline("no job can be added here (or use `herald cron add`)");
    },
  };
}

/** The `/mcp` route of the API server. */
export function createMcpRoute(
  config: McpPortConfig & { apiServer: { key?: string | undefined } },
  parts: McpPortParts & { version: string; logger: Logger },
): ReturnType<typeof createMcpHttpRoute> {
  return createMcpHttpRoute({
    port: createMcpPort(config, parts),
    key: config.apiServer.key,
    version: parts.version,
    logger: parts.logger,
  });
}
