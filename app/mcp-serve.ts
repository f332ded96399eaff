/**
 * Herald as an MCP server, wired: the port over the gateway's state, runner and cron service (mounted
 * at `/mcp` on the API server), and `herald mcp serve`, the stdio bridge to a running gateway.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Command } from "commander";
import { ConfigError, HeraldError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { createMcpHttpRoute } from "../gateway/mcp-server/http.js";
import { createHeraldMcpServer } from "../gateway/mcp-server/server.js";
import { runStdioBridge } from "../gateway/mcp-server/stdio-bridge.js";
import type { HeraldMcpPort } from "../gateway/mcp-server/types.js";
import type { GatewayRunner } from "../gateway/runner.js";
import { type CronService, SqliteCronStore } from "../scheduler/index.js";
import { jobView } from "../scheduler/jobs.js";
import { SqliteState } from "../sessions/sqlite-state.js";
import { cliAction } from "./cli/action.js";
import { type HeraldConfig, loadConfig } from "./config.js";
import type { NodeRoute } from "./http-server.js";
import { chatParser } from "./platforms.js";

/** Sends by idempotency key (kv namespace): a key seen before queues nothing. */
const SENDS_NAMESPACE = "mcp-sends";
/**
 * Who calls over MCP: the holder of `API_SERVER_KEY` (the endpoint is off without it), an owner by the
 * owner policy. Jobs added over MCP belong to it.
 */
const MCP_CALLER = { chat: { platform: "mcp", chatId: "owner" }, userId: "mcp" };

/** Herald's version (package.json, from source or from dist/). */
export function heraldVersion(): string {
  const url = [
    new URL("../package.json", import.meta.url),
    new URL("../../package.json", import.meta.url),
  ].find((u) => existsSync(u));
  return url ? (JSON.parse(readFileSync(url, "utf8")) as { version: string }).version : "0.0.0";
}

/** The reading half of the port, over a state file (the gateway's connection or one of our own). */
function readPort(
  config: HeraldConfig,
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
export function createMcpPort(
  config: HeraldConfig,
  parts: { state: SqliteState; runner: GatewayRunner; cron: CronService },
): HeraldMcpPort {
  const { state, runner, cron } = parts;
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
export function createOfflineMcpPort(config: HeraldConfig, state: SqliteState): HeraldMcpPort {
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
export function mcpRoute(
  config: HeraldConfig,
  parts: { state: SqliteState; runner: GatewayRunner; cron: CronService },
  logger: Logger,
): NodeRoute {
  return createMcpHttpRoute({
    port: createMcpPort(config, parts),
    key: config.apiServer.key,
    version: heraldVersion(),
    logger,
  });
}

/** Adds `herald mcp serve` (to the `mcp` command group, made here if no one made it yet). */
export function registerMcpServeCommand(
  program: Command,
  config: () => HeraldConfig = () => loadConfig(),
): void {
  const mcp =
    program.commands.find((c) => c.name() === "mcp") ??
    program.command("mcp").description("Model Context Protocol");
  mcp
    .command("serve")
    .description(
      "serve Herald's tools (sessions, send_message, cron) over MCP on stdio, through the running gateway",
    )
    .option(
      "--url <url>",
      "the gateway's HTTP server (default: HERALD_GATEWAY_URL, else the API server's address)",
    )
    .action(
      cliAction(async (opts: { url?: string }) => {
        const cfg = config();
        const key = cfg.apiServer.key;
        if (!key) {
          throw new ConfigError(
            "API_SERVER_KEY",
            "herald mcp serve reaches the gateway's /mcp endpoint with API_SERVER_KEY, which is not set. Fix: set API_SERVER_KEY (the same value for the gateway and for this command) and restart the gateway.",
          );
        }
        const host = ["0.0.0.0", "::"].includes(cfg.apiServer.host) ? "127.0.0.1" : cfg.apiServer.host;
        const base =
          opts.url ??
          cfg.gatewayClient.url ??
          `http://${host.includes(":") ? `[${host}]` : host}:${cfg.apiServer.port}`;
        const url = new URL("/mcp", base);
        const up = await fetch(new URL("/health", base), { signal: AbortSignal.timeout(5000) }).then(
          () => true,
          () => false,
        );
        if (!up) {
          // Read-only from the state file: sessions and jobs, nothing sent.
          process.stderr.write(
            `herald mcp: the gateway does not answer at ${base}; serving sessions and jobs from ${join(cfg.homeDir, "state.db")} read-only (sending and adding jobs need \`herald gateway\`).\n`,
          );
          if (!existsSync(join(cfg.homeDir, "state.db"))) {
            throw new Error(
              `There is no ${join(cfg.homeDir, "state.db")} and no gateway at ${base}: start Herald with \`herald gateway\` (with the API server on), or pass --url.`,
            );
          }
          const state = SqliteState.open(join(cfg.homeDir, "state.db"), {
            groupMode: cfg.sessions.groupSessions,
          });
          const server = createHeraldMcpServer(createOfflineMcpPort(cfg, state), heraldVersion());
          const transport = new StdioServerTransport();
          const closed = new Promise<void>((resolve) => {
            transport.onclose = () => resolve();
          });
          await server.connect(transport);
          await closed;
          state.close();
          return;
        }
        await runStdioBridge({
          url,
          key,
          onError: (message) => void process.stderr.write(`herald mcp: ${message}\n`),
        });
      }),
    );
}
