/**
 * The contract of `exec/`: where the agent's shell commands run. A backend prepares a workspace and
 * spawns `/bin/sh -c <command>` inside it; `run.ts` (foreground) and `processes.ts` (background) build
 * on `spawn` alone, so every backend gets timeouts, output caps and process management for free.
 */
import type { Readable } from "node:stream";

/** The backends Herald ships. */
export type BackendName = "local" | "sandbox" | "ssh" | "docker";

/** A workspace: one directory per session (or user) on the gateway's host. */
export interface Workspace {
  /** The session or user key the workspace belongs to (chat keys contain ':' and '@'). */
  readonly key: string;
  /** Absolute path of the workspace directory on the gateway's host. */
  readonly dir: string;
}

/** Whether a backend can run here; when not, what is missing and how to fix it. */
export type Availability =
  | { readonly available: true }
  | {
      readonly available: false;
      /** What is missing: "bubblewrap (bwrap) is not installed". */
      readonly missing: string;
      /** The fix: "apt-get install bubblewrap". */
      readonly fix: string;
    };

/** What to spawn. The environment is exactly the backend's minimal one (PATH, HOME, LANG) plus `env`. */
export interface SpawnRequest {
  /** A shell command line, run by `/bin/sh -c`. */
  readonly command: string;
  /**
   * The working directory: relative to the workspace root, or absolute inside it (as the command
   * sees the workspace). Anything outside the workspace is refused. @defaultValue the workspace root
   */
  readonly workdir?: string;
  /** Extra environment variables. The gateway's own `process.env` is never inherited. */
  readonly env?: Readonly<Record<string, string>>;
}

/** How a process ended: `exitCode` when it exited, `signal` when a signal ended it. */
export interface ExitStatus {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A running command. Its output streams are UTF-8 strings. */
export interface SpawnedProcess {
  /** The host pid of the process we started (group leader), when the OS gave one. */
  readonly pid: number | undefined;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Writes to the command's stdin. Rejects when stdin is closed or the process has exited. */
  write(data: string | Uint8Array): Promise<void>;
  /** Closes the command's stdin (EOF). Idempotent. */
  closeStdin(): void;
  /**
   * Sends `signal` to the WHOLE process group of the command (children included). Never throws.
   * After the command exited it still reaches children it left running in its group (a remote
   * backend then only signals its local client). @defaultValue "SIGTERM"
   */
  kill(signal?: NodeJS.Signals): void;
  /** Settles once the process exited and its output streams ended. Never rejects. */
  readonly exited: Promise<ExitStatus>;
}

/**
 * Where commands run. Implementations: `LocalBackend`, `SandboxBackend`, `SshBackend`,
 * `DockerBackend`, built by `createExecutionBackend`.
 */
export interface ExecutionBackend {
  readonly name: BackendName;
  /** Checks the tools this backend needs (binary, engine, host). Never throws. */
  checkAvailable(signal?: AbortSignal): Promise<Availability>;
  /**
   * Makes the workspace ready (directory, remote directory, container). Idempotent: call it before
   * every spawn if you like. Throws `HeraldError` ("tool_error") saying what failed and the fix.
   */
  prepare(workspace: Workspace, signal?: AbortSignal): Promise<void>;
  /**
   * Starts `request.command` in a prepared workspace. Throws `HeraldError` ("invalid_input") when
   * `workdir` is outside the workspace; a command that cannot start ends with exit code 127 or an
   * error message on stderr, as a shell would report it.
   */
  spawn(workspace: Workspace, request: SpawnRequest): SpawnedProcess;
  /** Releases what the backend opened (control connections, containers). Idempotent. */
  close(): Promise<void>;
}

/** Resource limits a confining backend applies to every command. */
export interface ExecLimits {
  /** CPU time per process, seconds (RLIMIT_CPU). */
  readonly cpuSeconds: number;
  /** Address space per process (sandbox, RLIMIT_AS) or memory of the container (docker), bytes. */
  readonly memoryBytes: number;
  /** Processes in the sandbox (RLIMIT_NPROC in its own user namespace) or the container's pids. */
  readonly maxProcesses: number;
  /** Largest file a command may write, bytes (RLIMIT_FSIZE). */
  readonly maxFileSizeBytes: number;
}

/** Defaults of `ExecLimits`: 5 CPU minutes, 1 GiB, 256 processes, 1 GiB files. */
export const DEFAULT_LIMITS: ExecLimits = {
  cpuSeconds: 300,
  memoryBytes: 1024 * 1024 * 1024,
  maxProcesses: 256,
  maxFileSizeBytes: 1024 * 1024 * 1024,
};

/** PATH every backend gives its commands. */
export const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";
