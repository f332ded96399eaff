/**
 * `herald logs [-f] [-n N] [--worker]`: the last lines of `HERALD_HOME/logs/herald.log` (and the rotated
 * files before it when it holds fewer), pretty and coloured on a terminal, the JSON lines otherwise;
 * `-f` then follows the file across rotations until Ctrl-C.
 */
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { cliAction } from "./cli-action.js";
import { loadConfig } from "./config.js";
import { prettyLine } from "./logging.js";

export interface ReadLogsOptions {
  /** Lines to show. @defaultValue 50 */
  lines?: number;
  /** Each line as written (JSON) or through this formatter. */
  format?: ((line: string) => string) | undefined;
  out?: NodeJS.WritableStream;
}

/** The last `lines` lines of `path` and its rotations (`path.1`, `path.2`, …), oldest first. */
export function lastLines(path: string, lines: number): string[] {
  const found: string[] = [];
  for (let i = 0; found.length < lines; i++) {
    const file = i === 0 ? path : `${path}.${i}`;
    if (!existsSync(file)) break;
    const text = readFileSync(file, "utf8").split("\n").filter(Boolean);
    found.unshift(...text.slice(Math.max(0, text.length - (lines - found.length))));
  }
  return found;
}

/** Prints the last lines; with `follow`, keeps printing new ones until `signal` aborts. */
export async function printLogs(
  path: string,
  options: ReadLogsOptions & { follow?: boolean; signal?: AbortSignal; pollMs?: number },
): Promise<void> {
  const out = options.out ?? process.stdout;
  const show = (line: string) => out.write(options.format ? options.format(line) : `${line}\n`);
  for (const line of lastLines(path, options.lines ?? 50)) show(line);
  if (!options.follow) return;
  let offset = existsSync(path) ? statSync(path).size : 0;
  let inode = existsSync(path) ? statSync(path).ino : 0;
  let partial = "";
  while (!options.signal?.aborted) {
    await new Promise((r) => setTimeout(r, options.pollMs ?? 250));
    if (!existsSync(path)) continue;
    const stat = statSync(path);
    // Rotated (a new file) or truncated: read the new one from its start.
    if (stat.ino !== inode || stat.size < offset) {
      inode = stat.ino;
      offset = 0;
      partial = "";
    }
    if (stat.size === offset) continue;
    const fd = openSync(path, "r");
    const buffer = Buffer.alloc(stat.size - offset);
    readSync(fd, buffer, 0, buffer.length, offset);
    closeSync(fd);
    offset = stat.size;
    const text = partial + buffer.toString("utf8");
    const parts = text.split("\n");
    partial = parts.pop() ?? "";
    for (const line of parts) if (line) show(line);
  }
}

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
