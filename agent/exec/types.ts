/**
 * The contract of `agent/exec/`: where the agent's shell commands run. A backend prepares a workspace and
 * spawns `/bin/sh -c <command>` inside it; `run.ts` (foreground) and `processes.ts` (background) build
 * on `spawn` alone, so every backend gets timeouts, output caps and process management for free.
 */
import type { Readable } from "node:stream";

/** The backends Herald ships. */
export const BACKEND_NAMES = [
  "local",
  "sandbox",
  "ssh",
  "docker",
  "daytona",
  "e2b",
  "modal",
  "vercel",
] as const;

/** The name of a backend Herald ships. */
export type BackendName = (typeof BACKEND_NAMES)[number];

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
  /**
   * Host folders shown read-only to this command at `path` (the sandbox binds them; a socket inside
   * stays connectable). Other backends ignore it: the caller checks `backend.name` and hands `local`
   * commands the host path instead.
   */
  readonly mounts?: readonly { readonly hostPath: string; readonly path: string }[];
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

/** A file or folder of a workspace as `WorkspaceFiles.stat` sees it (symbolic links followed). */
export interface FileInfo {
  readonly kind: "file" | "directory" | "other";
  readonly sizeBytes: number;
  /** Permission bits (`0o644`). */
  readonly mode: number;
  readonly mtimeMs: number;
}

/** What `WorkspaceFiles.write` did. */
export interface WriteOutcome {
  /** True when the file did not exist before. */
  readonly created: boolean;
  /** The size of the file it replaced (0 when created). */
  readonly previousBytes: number;
  readonly writtenBytes: number;
}

/**
 * The files of one workspace, read and written where its commands run: inside the sandbox as the
 * sandbox's user, on the remote host, in the container, or on this host for `local`. The file tools,
 * attachments, MCP files and the senses reach workspaces only through it, so a command that swaps a
 * folder for a link cannot steer a read or write out of what the commands themselves can reach.
 *
 * Paths are relative to the workspace root, `/`-separated, already checked by `workspacePath` (no
 * `..` above the root). The backend checks again where the files are: a path whose real location is
 * outside the workspace (a symbolic link pointing out) is refused with `invalid_input`.
 * Errors: `HeraldError` with `not_found` (no such file or folder), `invalid_input` (outside, a folder
 * where a file is expected, too large) or `tool_error` (anything else, with the reason).
 */
export interface WorkspaceFiles {
  /** The file or folder at `path`, or undefined when nothing is there. */
  stat(path: string): Promise<FileInfo | undefined>;
  /** Up to `length` bytes of the file at `path` from byte `offset` (fewer at its end). */
  read(path: string, range: { readonly offset: number; readonly length: number }): Promise<Uint8Array>;
  /**
   * Writes the file at `path` whole and atomically (a temporary file beside it, then a rename), making
   * missing parent folders. Keeps the mode of a file it replaces; a new file gets `mode` or 0644.
   */
  write(
    path: string,
    data: Uint8Array | AsyncIterable<Uint8Array>,
    options?: { readonly mode?: number },
  ): Promise<WriteOutcome>;
}

/**
 * Where commands run. Implementations: `LocalBackend`, `SandboxBackend`, `SshBackend`,
 * `DockerBackend`, `CloudBackend` (daytona, e2b, modal, vercel), built by `createExecutionBackend`.
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
  /**
   * The files of a prepared workspace, read and written where its commands run (see
   * `WorkspaceFiles`). Cheap: call it per use.
   */
  files(workspace: Workspace): WorkspaceFiles;
  /**
   * Ends what the backend keeps running for `workspace` besides commands (the sandbox's file helper),
   * e.g. when its session ends or its workspace is pruned; the next use starts it again. A cloud
   * backend deletes the workspace's sandbox with its files. Optional; never throws.
   */
  release?(workspace: Workspace): Promise<void>;
  /** Releases what the backend opened (control connections, containers, file helpers). Idempotent. */
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
  /** Size of the sandbox's `/tmp` and of its `/dev/shm` (each a tmpfs in memory), bytes. */
  readonly tmpSizeBytes: number;
  /**
   * Disk a workspace may hold, bytes (measured with `du`; see `WorkspaceQuota`). Past it, file writes
   * are refused and commands cannot grow files until files are deleted.
   */
  readonly workspaceQuotaBytes: number;
}

/**
 * Defaults of `ExecLimits`: 5 CPU minutes, 1 GiB, 256 processes, 1 GiB files, 256 MiB of `/tmp` (and
 * of `/dev/shm`), 2 GiB per workspace.
 */
export const DEFAULT_LIMITS: ExecLimits = {
  cpuSeconds: 300,
  memoryBytes: 1024 * 1024 * 1024,
  maxProcesses: 256,
  maxFileSizeBytes: 1024 * 1024 * 1024,
  tmpSizeBytes: 256 * 1024 * 1024,
  workspaceQuotaBytes: 2 * 1024 * 1024 * 1024,
};

/** PATH every backend gives its commands. */
export const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";
