/**
 * `herald logs [-f] [-n N] [--worker]`: the last lines of `HERALD_HOME/logs/herald.log` (and the rotated
 * files before it when it holds fewer), pretty and coloured on a terminal, the JSON lines otherwise;
 * `-f` then follows the file across rotations until Ctrl-C.
 */
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { loadConfig } from "../config.js";
import { prettyLine } from "../logging.js";
import { cliAction } from "./action.js";

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
  const emit = (text: string) => {
    const parts = (partial + text).split("\n");
    partial = parts.pop() ?? "";
    for (const line of parts) if (line) show(line);
  };
  while (!options.signal?.aborted) {
    await new Promise((r) => setTimeout(r, options.pollMs ?? 250));
    if (!existsSync(path)) continue;
    const stat = statSync(path);
    if (stat.ino !== inode) {
      // Rotated since the last look: finish the file we were reading (now `.k`), then any rotated
      // after it (`.k-1` … `.1`), then read the new file from its start.
      const rotated: string[] = [];
      for (let i = 1; existsSync(`${path}.${i}`); i++) rotated.push(`${path}.${i}`);
      const k = rotated.findIndex((f) => statSync(f).ino === inode);
      if (k >= 0) {
        emit(readFrom(rotated[k]!, offset));
        for (let i = k - 1; i >= 0; i--) emit(readFrom(rotated[i]!, 0));
      }
      inode = stat.ino;
      offset = 0;
    } else if (stat.size < offset) offset = 0; // truncated
    const text = readFrom(path, offset);
    offset += Buffer.byteLength(text);
    emit(text);
  }
}

/** The bytes of `file` from `offset` to its end, as text. */
function readFrom(file: string, offset: number): string {
  const size = statSync(file).size;
  if (size <= offset) return "";
  const fd = openSync(file, "r");
  try {
    const buffer = Buffer.alloc(size - offset);
    readSync(fd, buffer, 0, buffer.length, offset);
    return buffer.toString("utf8");
  } finally {
    closeSync(fd);
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
