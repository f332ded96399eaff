/**
 * `SshBackend`: commands run on another host over OpenSSH's `ssh` client, with key authentication and
 * one persistent control connection (ControlMaster) that every command reuses. The workspace is a
 * directory under `remoteRoot` on the remote host, named like the local one.
 */
import { execFile } from "node:child_process";
import { constants } from "node:fs";
import { access, mkdir } from "node:fs/promises";
import { basename, join } from "node:path";
import { HeraldError } from "../../core/errors.js";
import { type Logger, silentLogger } from "../../core/logger.js";
import { shellQuote, spawnGroup } from "./child.js";
import { ShellWorkspaceFiles } from "./files-shell.js";
import { remoteWorkdir } from "./paths.js";
import { remoteKillScript, remotePidFile, remoteRunScript } from "./remote.js";
import {
  type Availability,
  DEFAULT_PATH,
  type ExecutionBackend,
  type SpawnedProcess,
  type SpawnRequest,
  type Workspace,
  type WorkspaceFiles,
} from "./types.js";

/** Options of `SshBackend`. */
export interface SshBackendOptions {
  readonly host: string;
  readonly user: string;
  /** @defaultValue 22 */
  readonly port?: number;
  /** The private key (identity file). Only this key is offered (IdentitiesOnly). */
  readonly identityFile: string;
  /** Our own state: the control socket and, by default, `known_hosts`. Keep the path short (socket limit). */
  readonly stateDir: string;
  /** Parent of the remote workspaces: absolute, or relative to the remote home. @defaultValue "herald-workspaces" */
  readonly remoteRoot?: string;
  /** @defaultValue "accept-new" (trust on first use, refuse a changed key) */
  readonly strictHostKeyChecking?: "accept-new" | "yes" | "no";
  /** @defaultValue `<stateDir>/known_hosts` */
  readonly knownHostsFile?: string;
  /** How long the idle control connection stays up, seconds. @defaultValue 600 */
  readonly controlPersistS?: number;
  /** @defaultValue 10 */
  readonly connectTimeoutS?: number;
  /** On a kill, time the remote group gets after SIGTERM before SIGKILL, ms. @defaultValue 2_000 */
  readonly killGraceMs?: number;
  /** @defaultValue "ssh" */
  readonly sshPath?: string;
  readonly logger?: Logger;
}

/** Runs commands over ssh, one control connection per backend. */
export class SshBackend implements ExecutionBackend {
  readonly name = "ssh" as const;
  private readonly options: SshBackendOptions;
  private readonly remoteRoot: string;
  private readonly sshPath: string;
  private readonly killGraceMs: number;
  private readonly log: Logger;
  /** Remote kills in flight: `close()` lets them finish before it closes the control connection. */
  private readonly pendingKills = new Set<Promise<unknown>>();

  constructor(options: SshBackendOptions) {
    this.options = options;
    this.remoteRoot = (options.remoteRoot ?? "herald-workspaces").replace(/\/+$/, "");
    this.sshPath = options.sshPath ?? "ssh";
    this.killGraceMs = options.killGraceMs ?? 2_000;
    this.log = options.logger ?? silentLogger();
  }

  /** The control socket path (`%C` is ssh's hash of host, port and user). */
  get controlPath(): string {
    return join(this.options.stateDir, "cm-%C");
  }

  /** The ssh arguments before the destination: auth, host key policy and the control connection. */
  sshArgs(): string[] {
    const o = this.options;
    return [
      "-F",
      "/dev/null",
      "-T",
      "-p",
      String(o.port ?? 22),
      "-l",
      o.user,
      "-i",
      o.identityFile,
      "-o",
      "IdentitiesOnly=yes",
      "-o",
      "BatchMode=yes",
      "-o",
      `StrictHostKeyChecking=${o.strictHostKeyChecking ?? "accept-new"}`,
      "-o",
      `UserKnownHostsFile=${o.knownHostsFile ?? join(o.stateDir, "known_hosts")}`,
      "-o",
      "ControlMaster=auto",
      "-o",
      `ControlPath=${this.controlPath}`,
      "-o",
      `ControlPersist=${o.controlPersistS ?? 600}`,
      "-o",
      `ConnectTimeout=${o.connectTimeoutS ?? 10}`,
      "-o",
      "ServerAliveInterval=15",
      "-o",
      "LogLevel=ERROR",
    ];
  }

  /** The remote workspace directory of `workspace`. */
  remoteDir(workspace: Workspace): string {
    return `${this.remoteRoot}/${basename(workspace.dir)}`;
  }

  /** Runs a short remote command through the control connection and returns its stdout. */
  private exec(remoteCommand: string, signal?: AbortSignal, timeoutMs = 30_000): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(
        this.sshPath,
        [...this.sshArgs(), this.options.host, remoteCommand],
        { env: sshEnv(this.options.stateDir), signal, timeout: timeoutMs },
        (err, stdout, stderr) => (err ? reject(new Error(stderr.trim() || err.message)) : resolve(stdout)),
      );
    });
  }

  async checkAvailable(signal?: AbortSignal): Promise<Availability> {
    try {
      await access(this.options.identityFile, constants.R_OK);
    } catch {
      return {
        available: false,
        missing: `the ssh identity file ${this.options.identityFile} is missing or unreadable`,
        fix: "create a key with ssh-keygen -t ed25519 -f <file> and add the .pub to the remote authorized_keys",
      };
    }
    try {
      await mkdir(this.options.stateDir, { recursive: true, mode: 0o700 });
      await this.exec("true", signal, (this.options.connectTimeoutS ?? 10) * 1000 + 5_000);
      return { available: true };
    } catch (err) {
      const message = (err as Error).message;
      if (/ENOENT/.test(message)) {
        return {
          available: false,
          missing: "the OpenSSH client (ssh) is not installed",
          fix: "apt-get install openssh-client",
        };
      }
      return {
        available: false,
        missing: `ssh to ${this.destination()} failed: ${message}`,
        fix: fixFor(message),
      };
    }
  }

  private destination(): string {
    return `${this.options.user}@${this.options.host}:${this.options.port ?? 22}`;
  }

  async prepare(workspace: Workspace, signal?: AbortSignal): Promise<void> {
    await mkdir(this.options.stateDir, { recursive: true, mode: 0o700 });
    try {
      await this.exec(`mkdir -p -- ${shellQuote(this.remoteDir(workspace))}`, signal);
    } catch (err) {
      const message = (err as Error).message;
      throw new HeraldError(
        `cannot prepare the remote workspace on ${this.destination()}: ${message}; ${fixFor(message)}`,
        { code: "tool_error", cause: err, retryable: true },
      );
    }
  }

  spawn(workspace: Workspace, request: SpawnRequest): SpawnedProcess {
    const root = this.remoteDir(workspace);
    const cwd = remoteWorkdir(root, request.workdir);
    const pidFile = remotePidFile();
    const script = remoteRunScript({
      pidFile,
      root,
      cwd,
      env: { PATH: DEFAULT_PATH, LANG: "C.UTF-8", ...request.env },
      command: request.command,
      newSession: false,
    });
    // sshd makes the login shell a session leader; `exec` keeps its pid, so `$$` is the process group.
    const remote = `exec /bin/sh -c ${shellQuote(script)}`;
    return spawnGroup(this.sshPath, [...this.sshArgs(), this.options.host, remote], {
      env: sshEnv(this.options.stateDir),
      remoteKill: (sig) => {
        const kill = this.exec(remoteKillScript(pidFile, sig, this.killGraceMs))
          .catch((err: unknown) => this.log.warn({ err, host: this.options.host }, "remote kill failed"))
          .finally(() => this.pendingKills.delete(kill));
        this.pendingKills.add(kill);
        return kill.then(() => {});
      },
    });
  }

  /** The remote workspace's files, read and written on the remote host over the same connection. */
  files(workspace: Workspace): WorkspaceFiles {
    return new ShellWorkspaceFiles(this, workspace, this.remoteDir(workspace));
  }

  async close(): Promise<void> {
    await Promise.all([...this.pendingKills]);
    await new Promise<void>((resolve) => {
      execFile(
        this.sshPath,
        [...this.sshArgs(), "-O", "exit", this.options.host],
        { env: sshEnv(this.options.stateDir), timeout: 5_000 },
        () => resolve(), // No master running is the state we want.
      );
    });
  }
}

/** The ssh client's environment: no agent socket, no gateway secrets. */
function sshEnv(stateDir: string): Record<string, string> {
  return { PATH: DEFAULT_PATH, HOME: stateDir, LANG: "C.UTF-8" };
}

/** The fix for a failed ssh connection, from ssh's own error text. */
function fixFor(message: string): string {
  if (/Permission denied/i.test(message))
    return "add the public key of the identity file to ~/.ssh/authorized_keys of the remote user";
  if (/REMOTE HOST IDENTIFICATION HAS CHANGED|Host key verification failed/i.test(message))
    return "the host key changed or is unknown: check the host, then remove its line from the known_hosts file";
  if (/Connection refused|timed out|No route|Could not resolve/i.test(message))
    return "check the ssh host and port, and that sshd runs there";
  return "run the same ssh command by hand with -v to see why";
}

/** Builds an `SshBackend`. */
export function createSshBackend(options: SshBackendOptions): SshBackend {
  return new SshBackend(options);
}
