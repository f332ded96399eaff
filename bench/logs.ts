/**
 * What a log line costs the gateway's thread: pino's JSON to stdout alone, plus the rotated file under
 * HERALD_HOME/logs (a synchronous append), and pretty-printed for a terminal. The line is the one every
 * turn logs at `info` ("turn finished"); at `warn` (the API benchmark) no line is written per turn.
 */
import { mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createProcessLogger } from "../core/process-logger.js";

export interface LogsResult {
  lines: number;
  /** µs per line, by variant. */
  perLineUs: Record<string, number>;
}

const FIELDS = {
  component: "agent",
  turnId: "t4288b04c282ebd9b94be88bd",
  kind: "ok",
  durationMs: 7,
  model: "fake-model",
  promptTokens: 2872,
  completionTokens: 2,
  modelCalls: 1,
  toolCalls: 0,
};

/** CPU time of `lines` info lines per variant, three rounds each, best round kept. */
export async function benchLogs(options: { lines: number }): Promise<LogsResult> {
  const dir = mkdtempSync(join(tmpdir(), "herald-bench-logs-"));
  // stdout as in production but to /dev/null: a real write(2) per line, no terminal in the figure.
  const devNull = openSync("/dev/null", "w");
  const nullSink = { write: (s: string) => writeSync(devNull, s) };
  const variants: Record<string, () => ReturnType<typeof createProcessLogger>> = {
    "JSON to stdout": () =>
      createProcessLogger({ level: "info", format: "json", stdout: nullSink, tty: false }),
    "JSON to stdout + rotated file": () =>
      createProcessLogger({
        level: "info",
        format: "json",
        stdout: nullSink,
        tty: false,
        logsDir: dir,
        maxBytes: 10 * 1024 * 1024,
      }),
    "pretty (terminal) + rotated file": () =>
      createProcessLogger({
        level: "info",
        format: "pretty",
        stdout: nullSink,
        tty: true,
        logsDir: dir,
        maxBytes: 10 * 1024 * 1024,
      }),
  };
  const perLineUs: Record<string, number> = {};
  for (const [name, make] of Object.entries(variants)) {
    let best = Number.POSITIVE_INFINITY;
    for (let round = 0; round < 3; round++) {
      const { logger, close } = make();
      // CPU time (user + system) rather than wall time: the machine is shared, and CPU is what a line costs.
      const started = process.cpuUsage();
      for (let i = 0; i < options.lines; i++) logger.info(FIELDS, "turn finished");
      const used = process.cpuUsage(started);
      const us = (used.user + used.system) / options.lines;
      close();
      best = Math.min(best, us);
    }
    perLineUs[name] = Math.round(best * 100) / 100;
  }
  rmSync(dir, { recursive: true, force: true });
  return { lines: options.lines, perLineUs };
}

export function logsMarkdown(result: LogsResult, machine: string, command: string): string {
  const rows = Object.entries(result.perLineUs).map(([name, us]) => `| ${name} | ${us} µs |`);
  return [
    "## Logs: the cost of one line",
    "",
    `Command: \`${command}\` — ${machine}. ${result.lines.toLocaleString("en-US")} lines of the one a turn logs at \`info\` ("turn finished"), CPU time (user + system) per line, best of 3 rounds. stdout goes to /dev/null (a real write per line); the file is \`logs/herald.log\`, appended synchronously and rotated at 10 MB.`,
    "",
    "| variant | per line |",
    "|---|---|",
    ...rows,
    "",
    "One such line per turn: against ~0.9 ms of main-thread CPU per turn (API benchmark above, run at `warn`, so it writes none), the file adds the difference of the first two rows per turn at `info`.",
  ].join("\n");
}
