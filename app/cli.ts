#!/usr/bin/env node
/**
 * The `herald` command. Every subcommand loads the config the same way; a ConfigError prints the key
 * and the fix and exits with code 2.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Command } from "commander";
import { createCatalog } from "../agent/configured-model.js";
import { usageText } from "../agent/providers/commands.js";
import { ConfigError } from "../core/errors.js";
import { createLogger } from "../core/logger.js";
import { guardProcess } from "../core/process-guard.js";
import { createProcessLogger } from "../core/process-logger.js";
import { SqliteState } from "../sessions/sqlite-state.js";
import { cliAction } from "./cli/action.js";
import { type HeraldConfig, loadConfig } from "./config.js";
import { printDoctor, runDoctor } from "./doctor.js";
import { chatParser } from "./platforms.js";

// Run from source (app/cli.ts) or from the build (dist/app/cli.js): package.json is one or two up.
const pkgUrl = [
  new URL("../package.json", import.meta.url),
  new URL("../../package.json", import.meta.url),
].find((u) => existsSync(u))!;
const pkg = JSON.parse(readFileSync(pkgUrl, "utf8")) as { version: string };

function config(): HeraldConfig {
  return loadConfig();
}

/** stdout (pretty on a terminal) plus the rotated file `HERALD_HOME/logs/<fileName>`. */
function processLogger(cfg: HeraldConfig, fileName: string) {
  return createProcessLogger({
    level: cfg.logLevel,
    format: cfg.logFormat,
    logsDir: join(cfg.homeDir, "logs"),
    fileName,
    maxBytes: cfg.logMaxBytes,
    files: cfg.logFiles,
  });
}

function openState(cfg: HeraldConfig): SqliteState {
  return SqliteState.open(join(cfg.homeDir, "state.db"), { groupMode: cfg.sessions.groupSessions });
}

/** Runs a subcommand body; errors become a message and exit code 1 (2: configuration). */
const action = <A extends unknown[]>(fn: (...args: A) => Promise<void> | void) =>
  cliAction(fn, { exit: true });

const program = new Command()
  .name("herald")
  .description(
    "Herald: one AI assistant on Telegram, Discord, Slack, WhatsApp, Matrix, email and an OpenAI-compatible API",
  )
  .version(pkg.version);

program
  .command("gateway")
  .description(
    "run the adapters, the runner and the HTTP server (and the agent workers on the embedded queue)",
  )
  .action(
    action(async () => {
      const startedAt = performance.now();
      const cfg = config();
      const { logger } = processLogger(cfg, "herald.log");
      guardProcess(logger);
      const { startGateway } = await import("./gateway-main.js");
      const gateway = await startGateway(cfg, { logger });
      logger.info(
        { readyMs: Math.round(performance.now() - startedAt), url: gateway.http?.url },
        "herald ready",
      );
      const shutdown = async (signal: string) => {
        logger.info({ signal }, "shutting down");
        await gateway.stop();
        process.exit(0);
      };
      process.once("SIGINT", () => void shutdown("SIGINT"));
      process.once("SIGTERM", () => void shutdown("SIGTERM"));
    }),
  );

program
  .command("worker")
  .description("run agent workers that take turns from Redis (needs REDIS_URL)")
  .option("--concurrency <n>", "turns run at once by this process", (v) => Number.parseInt(v, 10))
  .action(
    action(async (opts: { concurrency?: number }) => {
      const cfg = config();
      if (opts.concurrency !== undefined && !(opts.concurrency > 0)) {
        throw new ConfigError(
          "--concurrency",
          "--concurrency must be a whole number above 0. Fix: e.g. --concurrency 4.",
        );
      }
      const { logger } = processLogger(cfg, "worker.log");
      guardProcess(logger);
      const { runWorker } = await import("./worker-main.js");
      const worker = await runWorker(cfg, { logger, concurrency: opts.concurrency });
      const shutdown = async (signal: string) => {
        logger.info({ signal }, "worker shutting down");
        await worker.stop();
        process.exit(0);
      };
      process.once("SIGINT", () => void shutdown("SIGINT"));
      process.once("SIGTERM", () => void shutdown("SIGTERM"));
    }),
  );

program
  .command("chat")
  .description("talk to the agent from this terminal, with the same sessions and tools")
  .action(
    action(async () => {
      // The terminal chat runs its turns in-process, also where the gateway uses Redis workers.
      const base = config();
      const cfg = {
        ...base,
        apiServer: { ...base.apiServer, enabled: false },
        queue: { ...base.queue, redisUrl: undefined },
      };
      const logger = createLogger({ level: process.env["HERALD_LOG_LEVEL"] ?? "warn" });
      const { startGateway } = await import("./gateway-main.js");
      const { createCliAdapter } = await import("../adapters/cli/index.js");
      const cli = createCliAdapter();
      const gateway = await startGateway(cfg, { logger, extraAdapters: [cli], localOnly: true });
      await cli.finished;
      await gateway.stop();
      process.stdout.write("\n");
      process.exit(0);
    }),
  );

const sessions = program.command("sessions").description("list, show, search, export and prune sessions");
sessions
  .command("list")
  .option("--limit <n>", "how many", (v) => Number.parseInt(v, 10), 20)
  .option("--active", "only active sessions")
  .action(
    action((opts: { limit: number; active?: boolean }) => {
      const state = openState(config());
      for (const s of state.sessions.list({ limit: opts.limit, activeOnly: opts.active })) {
        const when = new Date(s.lastActiveAt).toISOString().slice(0, 16).replace("T", " ");
        process.stdout.write(
          `${s.id}  ${when}  ${String(s.messageCount).padStart(4)} msgs  ${s.key}${s.endedAt ? `  (ended: ${s.endReason})` : ""}\n`,
        );
      }
      state.close();
    }),
  );
sessions.command("show <id>").action(
  action((id: string) => {
    const cfg = config();
    const state = openState(cfg);
    const session = state.sessions.get(id);
    if (!session) throw new Error(`No session ${id}. \`herald sessions list\` shows the ids.`);
    process.stdout.write(`${session.key}  (${session.messageCount} messages)\n\n`);
    for (const m of state.sessions.load(id)) {
      const content = m.message.content ?? "";
      const calls =
        m.message.role === "assistant" && m.message.tool_calls?.length
          ? ` [tools: ${m.message.tool_calls.map((c) => c.function.name).join(", ")}]`
          : "";
      process.stdout.write(`${m.message.role}${calls}: ${content}\n\n`);
    }
    process.stdout.write(`${usageText("Usage", state.usage.forSession(id), createCatalog(cfg))}\n`);
    state.close();
  }),
);
sessions
  .command("search <query...>")
  .option("--limit <n>", "how many hits", (v) => Number.parseInt(v, 10), 10)
  .action(
    action((query: string[], opts: { limit: number }) => {
      const state = openState(config());
      for (const hit of state.sessions.search(query.join(" "), { limit: opts.limit })) {
        process.stdout.write(
          `${hit.sessionId}  ${new Date(hit.createdAt).toISOString().slice(0, 16)}  ${hit.role}: ${hit.snippet}\n`,
        );
      }
      state.close();
    }),
  );
sessions
  .command("export <id>")
  .option("--format <format>", "json or md", "json")
  .action(
    action((id: string, opts: { format: string }) => {
      const state = openState(config());
      const session = state.sessions.get(id);
      if (!session) throw new Error(`No session ${id}.`);
      const messages = state.sessions.load(id);
      if (opts.format === "md") {
        process.stdout.write(`# ${session.key}\n\n`);
        for (const m of messages)
          process.stdout.write(`**${m.message.role}**: ${m.message.content ?? ""}\n\n`);
      } else {
        process.stdout.write(
          `${JSON.stringify({ session, messages: messages.map((m) => m.message) }, null, 2)}\n`,
        );
      }
      state.close();
    }),
  );
sessions
  .command("prune")
  .requiredOption("--older-than <days>", "delete ended sessions idle for more than this many days", (v) =>
    Number.parseFloat(v),
  )
  .action(
    action((opts: { olderThan: number }) => {
      const state = openState(config());
      const removed = state.sessions.prune(Date.now() - opts.olderThan * 86_400_000);
      process.stdout.write(`Deleted ${removed} ended session(s).\n`);
      state.close();
    }),
  );

const pairing = program.command("pairing").description("admit unknown users who asked for access");
pairing.command("list").action(
  action(() => {
    const state = openState(config());
    const pending = state.pairing.pending();
    process.stdout.write(
      pending.length
        ? "Pending requests (codes are shown only to the requester):\n"
        : "No pending requests.\n",
    );
    for (const r of pending) {
      process.stdout.write(
        `  ${r.platform}:${r.userId}${r.userName ? ` (${r.userName})` : ""}  expires ${new Date(r.expiresAt).toISOString()}\n`,
      );
    }
    const approved = state.pairing.approved();
    if (approved.length) process.stdout.write("Approved:\n");
    for (const a of approved) process.stdout.write(`  ${a.platform}:${a.userId}\n`);
    state.close();
  }),
);
pairing
  .command("approve <codeOrUser>")
  .description("approve by the code the user got, or directly as platform:userId")
  .action(
    action((value: string) => {
      const state = openState(config());
      try {
        const direct = value.includes(":") ? chatParser(value) : undefined;
        if (direct) {
          state.pairing.allow(direct.platform, direct.chatId);
          process.stdout.write(`Approved ${direct.platform}:${direct.chatId}.\n`);
          return;
        }
        const who = state.pairing.approve(value);
        if (!who)
          throw new Error(
            `No pending request has code ${value} (codes expire after 1 hour). \`herald pairing list\` shows requests.`,
          );
        process.stdout.write(`Approved ${who.platform}:${who.userId}.\n`);
      } finally {
        state.close();
      }
    }),
  );
pairing
  .command("revoke <user>")
  .description("revoke platform:userId")
  .action(
    action((value: string) => {
      const who = chatParser(value);
      if (!who) throw new Error("Give the user as platform:userId, e.g. telegram:12345.");
      const state = openState(config());
      const removed = state.pairing.revoke(who.platform, who.chatId);
      state.close();
      process.stdout.write(removed ? `Revoked ${value}.\n` : `${value} was not approved.\n`);
    }),
  );

program
  .command("doctor")
  .description("check the configuration, the model endpoint and the state file")
  .action(
    action(async () => {
      process.exitCode = printDoctor(await runDoctor());
    }),
  );

(await import("./cli/whatsapp.js")).registerWhatsAppCommands(program);
(await import("./cli/skills.js")).registerSkillsCommands(program);
(await import("./cli/cron.js")).registerCronCommands(program);
(await import("./cli/tasks.js")).registerTasksCommands(program);
(await import("./cli/logs.js")).registerLogsCommand(program);
(await import("./cli/service.js")).registerServiceCommands(program);
(await import("./cli/mcp.js")).registerMcpCommands(program);
(await import("./cli/setup.js")).registerSetupCommand(program);
(await import("./cli/plugins.js")).registerPluginsCommands(program);
(await import("./mcp-serve.js")).registerMcpServeCommand(program);
await program.parseAsync(process.argv);
