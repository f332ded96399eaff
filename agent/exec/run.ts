/**
 * The foreground run: one command, to completion or to its timeout, with its output capped. What the
 * `terminal` tool calls when `background` is false.
 */
import { HeraldError } from "../../core/errors.js";
import { HeadTailBuffer } from "./output.js";
import type { ExecutionBackend, SpawnedProcess, SpawnRequest, Workspace } from "./types.js";

/** Options of `runCommand`. */
export interface RunOptions extends SpawnRequest {
  /** Time the command may take; then its process group gets SIGTERM. @defaultValue 120_000 */
  readonly timeoutMs?: number;
  /** Time between SIGTERM and SIGKILL. @defaultValue 2_000 */
  readonly killGraceMs?: number;
  /** Characters kept of each of stdout and stderr (a small head and the tail). @defaultValue 30_000 */
  readonly maxOutputChars?: number;
  /** Written to stdin, which is then closed. Without it stdin is closed at once. */
  readonly stdin?: string;
  /** Aborting kills the process group and rejects with `HeraldError` ("turn_cancelled"). */
  readonly signal?: AbortSignal;
}

/** The outcome of a foreground run. */
export interface RunResult {
  /** The exit code, or null when a signal ended the command. */
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  /** True when the timeout killed the command. */
  readonly timedOut: boolean;
  /** Captured stdout: head, a marker with the count where characters were dropped, tail. */
  readonly stdout: string;
  readonly stderr: string;
  /** Characters dropped from stdout and stderr together (exact). */
  readonly droppedChars: number;
  readonly durationMs: number;
}

/**
 * Sends SIGTERM to the process group, then SIGKILL after `graceMs` unless it exited. Resolves when
 * it exited.
 */
export async function terminate(proc: SpawnedProcess, graceMs: number): Promise<void> {
  proc.kill("SIGTERM");
  const timer = setTimeout(() => proc.kill("SIGKILL"), graceMs);
  try {
    await proc.exited;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs `options.command` in `workspace` through `backend` and waits for it; children it leaves running
 * in its process group are killed when it exits. Never throws for a failing
 * command (look at `exitCode`); throws `HeraldError` ("turn_cancelled") when `options.signal` aborts,
 * after the process group was killed, and whatever `backend.spawn` throws for a bad `workdir`.
 */
export async function runCommand(
  backend: ExecutionBackend,
  workspace: Workspace,
  options: RunOptions,
): Promise<RunResult> {
  const { timeoutMs = 120_000, killGraceMs = 2_000, maxOutputChars = 30_000, signal } = options;
  if (signal?.aborted) throw cancelled(signal);
  const startedAt = performance.now();
  const proc = backend.spawn(workspace, options);
  const stdout = new HeadTailBuffer(maxOutputChars);
  const stderr = new HeadTailBuffer(maxOutputChars);
  proc.stdout.on("data", (chunk: string) => stdout.push(chunk));
  proc.stderr.on("data", (chunk: string) => stderr.push(chunk));
  proc.write(options.stdin ?? "").then(
    () => proc.closeStdin(),
    () => {}, // The command exited before reading its input: its exit status says what happened.
  );

  let timedOut = false;
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    // `proc.exited` below is what we wait on; terminate's own promise settles with it.
    void terminate(proc, killGraceMs);
  };
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, timeoutMs);
  const onAbort = stop;
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const status = await proc.exited;
    // A foreground command's background children (`server &`) would outlive it unseen: long-lived
    // programs belong in the ProcessRegistry, so leftovers in the group are killed.
    proc.kill("SIGKILL");
    if (signal?.aborted) throw cancelled(signal);
    return {
      exitCode: status.exitCode,
      signal: status.signal,
      timedOut,
      stdout: stdout.text(),
      stderr: stderr.text(),
      droppedChars: stdout.droppedChars + stderr.droppedChars,
      durationMs: Math.round(performance.now() - startedAt),
    };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
}

function cancelled(signal: AbortSignal): HeraldError {
  return new HeraldError("the command was cancelled; its process group was killed", {
    code: "turn_cancelled",
    cause: signal.reason,
  });
}
