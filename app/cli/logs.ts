/**
 * `herald logs [-f] [-n N] [--worker]`: the last lines of `HERALD_HOME/logs/herald.log` (and the rotated
 * files before it when it holds fewer), pretty and coloured on a terminal, the JSON lines otherwise;
 * `-f` then follows the file across rotations until Ctrl-C.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { printLogs } from "../../core/log-reader.js";
import { prettyLine } from "../../core/process-logger.js";
import { loadConfig } from "../config.js";
import { cliAction } from "./action.js";

/** Adds `herald logs` to the program. */
export function registerLogsCommand(program: Command): void {
  program
    .command("logs")
    .description(
      "show the gateway's log (HERALD_HOME/logs/herald.log): pretty on a terminal, JSON when piped",
    )
    .option("-n, --lines <n>", "how many lines", (v) => Number.parseInt(v, 10), 50)
    .option("-f, --follow", "keep printing new lines (Ctrl-C ends)")
    .option("--worker", "the worker's log (worker.log) instead of the gateway's")
    .option("--json", "JSON lines even on a terminal")
    .action(
      cliAction(async (opts: { lines: number; follow?: boolean; worker?: boolean; json?: boolean }) => {
        if (!(opts.lines >= 0)) throw new Error("-n must be a whole number, e.g. -n 100.");
        const config = loadConfig();
        const path = join(config.homeDir, "logs", opts.worker ? "worker.log" : "herald.log");
        if (!existsSync(path)) {
          throw new Error(
            `No log at ${path} yet: it is written once \`herald ${opts.worker ? "worker" : "gateway"}\` runs (HERALD_LOG_FILES=0 turns it off).`,
          );
        }
        const tty = process.stdout.isTTY === true;
        const controller = new AbortController();
        process.once("SIGINT", () => controller.abort());
        await printLogs(path, {
          lines: opts.lines,
          format: tty && !opts.json ? prettyLine(true) : undefined,
          follow: opts.follow,
          signal: controller.signal,
        });
      }),
    );
}
