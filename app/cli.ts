#!/usr/bin/env node
/**
 * The `herald` command. Every subcommand loads the config the same way; a ConfigError prints the key
 * and the fix and exits with code 2.
 */
import { join } from "node:path";
import { Command } from "commander";
import { ConfigError } from "../core/errors.js";
import { guardProcess } from "../core/process-guard.js";
import { createProcessLogger } from "../core/process-logger.js";
import { cliAction } from "./cli/action.js";
import { type HeraldConfig, loadConfig } from "./config.js";
import { printDoctor, runDoctor } from "./doctor.js";
import { heraldVersion } from "./version.js";

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

(await import("./cli/chat.js")).registerChatCommand(program);

(await import("./cli/sessions.js")).registerSessionsCommands(program);
(await import("./cli/pairing.js")).registerPairingCommands(program);

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
(await import("./cli/task-board.js")).registerTaskBoardCommands(program);
(await import("./cli/logs.js")).registerLogsCommand(program);
(await import("./cli/service.js")).registerServiceCommands(program);
(await import("./cli/mcp.js")).registerMcpCommands(program);
(await import("./cli/setup.js")).registerSetupCommand(program);
(await import("./cli/plugins.js")).registerPluginsCommands(program);
(await import("./cli/mcp-serve.js")).registerMcpServeCommand(program);
await program.parseAsync(process.argv);
