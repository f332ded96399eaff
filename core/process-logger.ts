/**
 * The process logger of `herald gateway` and `herald worker`: to stdout, pretty and coloured when it is
 * a terminal (pino-pretty) and JSON lines otherwise, and always as JSON lines to a rotated file under
 * `HERALD_HOME/logs/` that `herald logs` reads. Redaction (core/logger.ts) applies to both.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { pino } from "pino";
import type PinoPretty from "pino-pretty";
import { createRotatingFile } from "./log-file.js";
import { createLogger, type Logger } from "./logger.js";

export type LogFormat = "auto" | "pretty" | "json";

export interface ProcessLoggerOptions {
  level: string;
  /** `auto`: pretty when stdout is a TTY. @defaultValue "auto" */
  format?: LogFormat;
  /** `HERALD_HOME/logs`; no file when undefined. */
  logsDir?: string | undefined;
  /** The file's name in `logsDir`. @defaultValue "herald.log" */
  fileName?: string;
  /** Rotate the file past this size. @defaultValue 10 MiB */
  maxBytes?: number;
  /** Rotated files kept; 0 writes no file at all. @defaultValue 5 */
  files?: number;
  /** Whether stdout is a terminal. @defaultValue process.stdout.isTTY */
  tty?: boolean;
  /** Where the stdout lines go instead of fd 1 (the benchmark). */
  stdout?: { write(text: string): unknown };
}

/** Whether the stdout lines are pretty: forced by `format`, else when stdout is a terminal. */
export function prettyOutput(format: LogFormat, tty: boolean): boolean {
  return format === "pretty" || (format === "auto" && tty);
}

/** A line formatter for human eyes, coloured when `colorize` (pino-pretty's own output). */
export function prettyLine(colorize: boolean): (jsonLine: string) => string {
  // Loaded only when a terminal reads the lines: a service logging JSON never pays for it.
  const pretty = createRequire(import.meta.url)("pino-pretty") as typeof PinoPretty;
  return pretty.prettyFactory({ colorize, translateTime: "SYS:HH:MM:ss.l", ignore: "pid,hostname" });
}

/** Builds the logger; `close()` releases the file. */
export function createProcessLogger(options: ProcessLoggerOptions): { logger: Logger; close(): void } {
  const tty = options.tty ?? process.stdout.isTTY === true;
  const format = stdoutFormatter(options.format ?? "auto", tty);
  const sink = options.stdout;
  const stdout: pino.DestinationStream = format
    ? {
        write: (line: string) => {
          (sink ?? process.stdout).write(format(line));
        },
      }
    : ((sink as pino.DestinationStream | undefined) ?? pino.destination({ dest: 1, sync: true }));
  const files = options.files ?? 5;
  const file = options.logsDir && files > 0 ? openLogFile(options, files) : undefined;
  const destination = file
    ? pino.multistream([
        { level: "trace", stream: stdout },
        { level: "trace", stream: file },
      ])
    : stdout;
  return { logger: createLogger({ level: options.level, destination }), close: () => file?.close() };
}

function stdoutFormatter(format: LogFormat, tty: boolean): ((line: string) => string) | undefined {
  return prettyOutput(format, tty) ? prettyLine(tty) : undefined;
}

/** The rotated file, or none (said once on stderr) when it cannot be opened: logs still reach stdout. */
function openLogFile(options: ProcessLoggerOptions, files: number) {
  const path = join(options.logsDir!, options.fileName ?? "herald.log");
  try {
    return createRotatingFile({ path, maxBytes: options.maxBytes, keep: files });
  } catch (err) {
    process.stderr.write(
      `herald: cannot open ${path} (${(err as Error).message}); logging to stdout only. Fix the folder's permissions, or set HERALD_LOG_FILES=0.\n`,
    );
    return undefined;
  }
}
