#!/usr/bin/env node
/**
 * The `herald` command. Every subcommand loads the config the same way; a ConfigError prints the key
 * and the fix and exits with code 2.
 *
 * Loading: a process loads the module of the subcommand it runs and nothing else. `gateway` and
 * `worker` are defined here and import their main when they run; every other command group lives in
 * `cli/<name>.ts` and is listed in {@link commandModules} by its top-level name. When argv names one of
 * them only that module is imported (and registers itself); `--help`, `help`, no command or an unknown
 * one import them all, so help lists every command. A new command group adds one line there.
 */
import { join } from "node:path";
import { Command } from "commander";
import { ConfigError } from "../core/errors.js";
import { guardProcess } from "../core/process-guard.js";
import { createProcessLogger } from "../core/process-logger.js";
import { cliAction } from "./cli/action.js";
import { type HeraldConfig, loadConfig } from "./config.js";
import { heraldVersion } from "./version.js";

function config(options: { adapters?: boolean } = {}): HeraldConfig {
  return loadConfig(options);
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

/** Runs a subcommand body; errors become a message and exit code 1 (2: configuration). */
const action = <A extends unknown[]>(fn: (...args: A) => Promise<void> | void) =>
  cliAction(fn, { exit: true });

const program = new Command()
  .name("herald")
  .description(
    "Herald: one AI assistant on Telegram, Discord, Slack, WhatsApp, Matrix, email and an OpenAI-compatible API",
  )
  .version(heraldVersion());

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
      // A worker starts no adapters: bot accounts' tokens stay in the gateway's environment.
      const cfg = config({ adapters: false });
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
  .command("doctor")
  .description("check the configuration, the model endpoint and the state file")
  .action(
    action(async () => {
      const { printDoctor, runDoctor } = await import("./doctor.js");
      process.exitCode = printDoctor(await runDoctor());
    }),
  );

/** Each command group's top-level name → its module, which registers it on the program. */
const commandModules: Record<string, () => Promise<(program: Command) => unknown>> = {
  chat: async () => (await import("./cli/chat.js")).registerChatCommand,
  sessions: async () => (await import("./cli/sessions.js")).registerSessionsCommands,
  usage: async () => (await import("./cli/usage.js")).registerUsageCommand,
  pairing: async () => (await import("./cli/pairing.js")).registerPairingCommands,
  whatsapp: async () => (await import("./cli/whatsapp.js")).registerWhatsAppCommands,
  skills: async () => (await import("./cli/skills.js")).registerSkillsCommands,
  cron: async () => (await import("./cli/cron.js")).registerCronCommands,
  tasks: async () => (await import("./cli/task-board.js")).registerTaskBoardCommands,
  logs: async () => (await import("./cli/logs.js")).registerLogsCommand,
  service: async () => (await import("./cli/service.js")).registerServiceCommands,
  mcp: async () => (await import("./cli/mcp.js")).registerMcpCommands,
  setup: async () => (await import("./cli/setup.js")).registerSetupCommand,
  plugins: async () => (await import("./cli/plugins.js")).registerPluginsCommands,
};
// `herald mcp serve` joins the `mcp` group from its own module.
const extraModules: Record<string, () => Promise<(program: Command) => unknown>> = {
  mcp: async () => (await import("./cli/mcp-serve.js")).registerMcpServeCommand,
};

/** The command groups argv runs: its first word's alone, or all of them when help is wanted. */
function wantedGroups(argv: readonly string[]): string[] {
  const first = argv.find((arg) => !arg.startsWith("-"));
  if (first === undefined && argv.some((arg) => arg === "-V" || arg === "--version")) return [];
  if (first === "gateway" || first === "worker" || first === "doctor") return [];
  if (first !== undefined && Object.hasOwn(commandModules, first)) return [first];
  return Object.keys(commandModules);
}

for (const name of wantedGroups(process.argv.slice(2))) {
  (await commandModules[name]!())(program);
  await extraModules[name]?.().then((register) => register(program));
}
await program.parseAsync(process.argv);
