/**
 * Turns a node `ChildProcess` started in its own process group into a `SpawnedProcess`. Shared by
 * every backend: they differ only in the program they start and in how a kill reaches the command.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { PassThrough, type Readable } from "node:stream";
import { HeraldError } from "../../core/errors.js";
import type { ExitStatus, SpawnedProcess } from "./types.js";

/** How long `exited` waits for the output pipes after the process exited (a daemonised grandchild may hold them). */
const PIPE_DRAIN_MS = 300;

/** Options of `spawnGroup`. */
export interface SpawnGroupOptions {
  /** Working directory on the host. */
  readonly cwd?: string;
  /** The complete environment of the program: nothing of `process.env` is added. */
  readonly env: Readonly<Record<string, string>>;
  /**
   * Kills the command where it really runs (a remote host, a container), for a local program that is
   * only a client (ssh, docker exec). `kill()` signals the local group once it settles, or at once for
   * SIGKILL. Must not reject; failures are its own to report.
   */
  readonly remoteKill?: (signal: NodeJS.Signals) => Promise<void>;
  /** Opens a fourth pipe (the program's fd 3, written by it) and hands its reading end over. */
  readonly onInfoPipe?: (pipe: Readable) => void;
}

/**
 * Starts `file args` as the leader of a new process group (`detached`), stdin/stdout/stderr piped, and
 * wraps it. A program that cannot start reports on stderr and ends with exit code 127.
 */
export function spawnGroup(
  file: string,
  args: readonly string[],
  options: SpawnGroupOptions,
): SpawnedProcess {
  const child = spawn(file, args, {
    cwd: options.cwd,
    env: { ...options.env },
    detached: true,
    stdio: options.onInfoPipe ? ["pipe", "pipe", "pipe", "pipe"] : ["pipe", "pipe", "pipe"],
  });
  const info = child.stdio[3];
  if (options.onInfoPipe && info && "read" in info) options.onInfoPipe(info);
  return wrapChild(child, file, options.remoteKill);
}

function wrapChild(
  child: ChildProcess,
  file: string,
  remoteKill: ((signal: NodeJS.Signals) => Promise<void>) | undefined,
): SpawnedProcess {
  const stdout = new PassThrough({ encoding: "utf8" });
  const stderr = new PassThrough({ encoding: "utf8" });
  child.stdout?.pipe(stdout);
  child.stderr?.pipe(stderr);
  // A write to a command that closed its stdin raises EPIPE on the pipe; `write()` reports it instead.
  child.stdin?.on("error", () => {});
  let exitedFlag = false;
  let leaderExited = false;

  const exited = new Promise<ExitStatus>((resolve) => {
    let settled = false;
    const finish = (status: ExitStatus) => {
      if (settled) return;
      settled = true;
      exitedFlag = true;
      resolve(status);
    };
    child.once("error", (err) => {
      stderr.write(`cannot start ${file}: ${err.message}\n`);
      stdout.end();
      stderr.end();
      finish({ exitCode: 127, signal: null });
    });
    child.once("exit", (code, signal) => {
      leaderExited = true;
      const status = { exitCode: code, signal };
      const timer = setTimeout(() => {
        // A background grandchild still holds the pipes: stop reading them so the caller is not stuck.
        child.stdout?.destroy();
        child.stderr?.destroy();
        stdout.end();
        stderr.end();
        finish(status);
      }, PIPE_DRAIN_MS);
      child.once("close", () => {
        clearTimeout(timer);
        finish(status);
      });
    });
  });

  return {
    pid: child.pid,
    stdout,
    stderr,
    exited,
    write(data) {
      const stdin = child.stdin;
      if (!stdin || stdin.destroyed || stdin.writableEnded || exitedFlag) {
        return Promise.reject(
          new HeraldError("the process's stdin is closed: it has exited or its input was ended", {
            code: "invalid_input",
          }),
        );
      }
      return new Promise<void>((resolve, reject) => {
        stdin.write(data, (err) => {
          if (err)
            reject(new HeraldError(`cannot write to the process: ${err.message}`, { code: "tool_error" }));
          else resolve();
        });
      });
    },
    closeStdin() {
      child.stdin?.end();
    },
    kill(signal = "SIGTERM") {
      // Once the client exited, the remote command finished with it: only local leftovers remain.
      if (!remoteKill || leaderExited) return killGroup(child.pid, signal);
      const remote = remoteKill(signal).catch(() => {});
      // The client ends by itself once the remote command is gone; SIGKILL does not wait for that.
      if (signal === "SIGKILL") killGroup(child.pid, signal);
      else void remote.then(() => killGroup(child.pid, signal));
    },
  };
}

/** Signals the process group led by `pid`; a group that is already gone is not an error. */
export function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: every member already exited. EPERM cannot happen for a group we created.
  }
}

/** Quotes `value` for a POSIX shell: one argument, no expansion. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** Whether a process with this pid exists (EPERM: it does, owned by someone else). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
