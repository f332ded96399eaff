/**
 * Runs the audio tools (ffmpeg, ffprobe) as child processes: argument arrays and no shell, a timeout,
 * an AbortSignal, bounded output. Every failure becomes a HeraldError that says what to do.
 */
import { spawn } from "node:child_process";
import { HeraldError } from "../../../core/errors.js";

/** How to run one tool. */
export interface RunOptions {
  /** Kill the process (SIGKILL) after this long. @defaultValue 60_000 */
  timeoutMs?: number;
  /** Kills the process when it fires; the call then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Stdout kept at most; more is an error (a probe never prints megabytes). @defaultValue 4 MiB */
  maxStdoutBytes?: number;
}

/** What a finished tool printed. */
export interface RunResult {
  stdout: string;
  stderr: string;
}

const STDERR_TAIL_CHARS = 2_000;

/** The fix for a missing ffmpeg or ffprobe (the Debian package `ffmpeg` ships both), as doctor says it. */
export function installHint(command: string): string {
  return `${command} is not installed or not on PATH: apt-get install ffmpeg`;
}

/**
 * Runs `command args…` and resolves with its output when it exits 0.
 * Rejects with a HeraldError: `config_missing` when the binary is absent, `tool_error` on a non-zero exit
 * or a timeout (the message carries the tail of stderr); with `signal.reason` when aborted.
 */
export function runTool(
  command: string,
  args: readonly string[],
  options: RunOptions = {},
): Promise<RunResult> {
  const { timeoutMs = 60_000, signal, maxStdoutBytes = 4 * 1024 * 1024 } = options;
  const name = command.replace(/^.*\//, "");
  return new Promise((resolve, reject) => {
    signal?.throwIfAborted();
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], shell: false });
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = "";
    let failure: unknown;
    const fail = (error: unknown) => {
      failure ??= error;
      child.kill("SIGKILL");
    };
    const timer = setTimeout(
      () => fail(new HeraldError(`${name} did not finish within ${timeoutMs} ms`, { code: "tool_error" })),
      timeoutMs,
    );
    const onAbort = () => fail(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    child.stdout.on("data", (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > maxStdoutBytes)
        fail(new HeraldError(`${name} printed more than ${maxStdoutBytes} bytes`, { code: "tool_error" }));
      else out.push(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      err = (err + chunk.toString("utf8")).slice(-STDERR_TAIL_CHARS);
    });
    const finish = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    child.once("error", (error: NodeJS.ErrnoException) => {
      finish();
      if (error.code === "ENOENT")
        reject(new HeraldError(installHint(command), { code: "config_missing", cause: error }));
      else
        reject(
          new HeraldError(`${name} could not start: ${error.message}`, { code: "tool_error", cause: error }),
        );
    });
    child.once("close", (code, killedBy) => {
      finish();
      if (failure !== undefined) return reject(failure);
      const stdout = Buffer.concat(out).toString("utf8");
      if (code === 0) return resolve({ stdout, stderr: err });
      const why = err.trim().split("\n").slice(-3).join(" | ") || `exit ${code ?? killedBy}`;
      reject(new HeraldError(`${name} failed: ${why}`, { code: "tool_error" }));
    });
  });
}
