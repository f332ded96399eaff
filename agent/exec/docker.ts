/**
 * `DockerBackend`: one long-lived container per workspace (the workspace mounted at /workspace, no
 * network by default, memory and pids limits, all capabilities dropped), commands through
 * `docker exec`. The container runs as the gateway's uid so files in the workspace stay the gateway's.
 * The image needs `/bin/sh` and util-linux `setsid` (Debian images have both).
 */
import { execFile } from "node:child_process";
import { basename } from "node:path";
import { HeraldError } from "../../core/errors.js";
import { type Logger, silentLogger } from "../../core/logger.js";
import { spawnGroup } from "./child.js";
import { ShellWorkspaceFiles } from "./files-shell.js";
import { remoteWorkdir } from "./paths.js";
import { remoteKillScript, remotePidFile, remoteRunScript } from "./remote.js";
import {
  type Availability,
  DEFAULT_LIMITS,
  DEFAULT_PATH,
  type ExecLimits,
  type ExecutionBackend,
  type SpawnedProcess,
  type SpawnRequest,
  type Workspace,
  type WorkspaceFiles,
} from "./types.js";

/** Where commands see their workspace inside the container. */
export const CONTAINER_WORKSPACE = "/workspace";

/** Options of `DockerBackend`. */
export interface DockerBackendOptions {
  /** @defaultValue "debian:bookworm-slim" */
  readonly image?: string;
  /** @defaultValue false (`--network none`) */
  readonly networkAllowed?: boolean;
  /** @defaultValue DEFAULT_LIMITS */
  readonly limits?: Partial<ExecLimits>;
  /** Container names are this prefix and the workspace directory's name. @defaultValue "herald-ws-" */
  readonly containerPrefix?: string;
  /** Remove the containers this backend started on `close()`. @defaultValue true */
  readonly removeOnClose?: boolean;
  /** On a kill, time the container's process group gets after SIGTERM before SIGKILL, ms. @defaultValue 2_000 */
  readonly killGraceMs?: number;
  /** @defaultValue "docker" */
  readonly dockerPath?: string;
  readonly logger?: Logger;
}

/** Runs commands in a per-workspace container through the docker CLI. */
export class DockerBackend implements ExecutionBackend {
  readonly name = "docker" as const;
  private readonly image: string;
  private readonly networkAllowed: boolean;
  private readonly limits: ExecLimits;
  private readonly prefix: string;
  private readonly removeOnClose: boolean;
  private readonly dockerPath: string;
  private readonly killGraceMs: number;
  private readonly log: Logger;
  private readonly started = new Set<string>();
  /** Kills in flight: `close()` lets them finish before it removes containers. */
  private readonly pendingKills = new Set<Promise<unknown>>();

  constructor(options: DockerBackendOptions = {}) {
    this.image = options.image ?? "debian:bookworm-slim";
    this.networkAllowed = options.networkAllowed ?? false;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.prefix = options.containerPrefix ?? "herald-ws-";
    this.removeOnClose = options.removeOnClose ?? true;
    this.dockerPath = options.dockerPath ?? "docker";
    this.killGraceMs = options.killGraceMs ?? 2_000;
    this.log = options.logger ?? silentLogger();
  }

  private docker(args: string[], signal?: AbortSignal, timeoutMs = 60_000): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(
        this.dockerPath,
        args,
        { env: dockerClientEnv(), signal, timeout: timeoutMs },
        (err, stdout, stderr) =>
          err ? reject(new Error(stderr.trim() || err.message)) : resolve(stdout.trim()),
      );
    });
  }

  async checkAvailable(signal?: AbortSignal): Promise<Availability> {
    try {
      await this.docker(["info", "--format", "{{.ServerVersion}}"], signal, 15_000);
      return { available: true };
    } catch (err) {
      const message = (err as Error).message;
      if (/ENOENT/.test(message)) {
        return {
          available: false,
          missing: "the docker CLI is not installed",
          fix: "install Docker (https://docs.docker.com/engine/install/) or choose another backend",
        };
      }
      return {
        available: false,
        missing: `the docker CLI is installed but no Docker engine answers: ${message.split("\n")[0]}`,
        fix: "start the engine (systemctl start docker), or set DOCKER_HOST, or choose the sandbox backend",
      };
    }
  }

  /** The container of `workspace`. */
  containerName(workspace: Workspace): string {
    return `${this.prefix}${basename(workspace.dir)}`.replace(/[^A-Za-z0-9_.-]/g, "_");
  }

  async prepare(workspace: Workspace, signal?: AbortSignal): Promise<void> {
    const name = this.containerName(workspace);
    try {
      const running = await this.docker(["inspect", "-f", "{{.State.Running}}", name], signal).catch(
        () => "",
      );
      if (running === "true") return;
      if (running === "false") await this.docker(["start", name], signal);
      else await this.docker(this.runArgs(workspace, name), signal, 300_000);
      this.started.add(name);
    } catch (err) {
      throw new HeraldError(
        `cannot start the container ${name} (image ${this.image}): ${(err as Error).message}; ` +
          "check that the engine runs and the image can be pulled",
        { code: "tool_error", cause: err, retryable: true },
      );
    }
  }

  /** The `docker run` arguments of a workspace container. */
  runArgs(workspace: Workspace, name: string): string[] {
    const uid = process.getuid?.() ?? 1000;
    const gid = process.getgid?.() ?? 1000;
    return [
      "run",
      "-d",
      "--name",
      name,
      "--init",
      "--user",
      `${uid}:${gid}`,
      "--network",
      this.networkAllowed ? "bridge" : "none",
      "--memory",
      String(this.limits.memoryBytes),
      "--memory-swap",
      String(this.limits.memoryBytes),
      "--pids-limit",
      String(this.limits.maxProcesses),
      "--ulimit",
      `cpu=${this.limits.cpuSeconds}`,
      "--ulimit",
      `fsize=${this.limits.maxFileSizeBytes}`,
      "--cap-drop",
      "ALL",
      "--security-opt",
      "no-new-privileges",
      "--tmpfs",
      `/tmp:rw,size=${this.limits.tmpSizeBytes}`,
      "--shm-size",
      String(this.limits.tmpSizeBytes),
      "-v",
      `${workspace.dir}:${CONTAINER_WORKSPACE}`,
      "-w",
      CONTAINER_WORKSPACE,
      this.image,
      "sleep",
      "infinity",
    ];
  }

  spawn(workspace: Workspace, request: SpawnRequest): SpawnedProcess {
    const name = this.containerName(workspace);
    const cwd = remoteWorkdir(CONTAINER_WORKSPACE, request.workdir);
    const pidFile = remotePidFile();
    const script = remoteRunScript({
      pidFile,
      root: CONTAINER_WORKSPACE,
      cwd,
      env: { PATH: DEFAULT_PATH, LANG: "C.UTF-8", ...request.env },
      command: request.command,
      newSession: true,
    });
    return spawnGroup(this.dockerPath, ["exec", "-i", name, "/bin/sh", "-c", script], {
      env: dockerClientEnv(),
      remoteKill: (sig) => {
        const kill = this.docker([
          "exec",
          name,
          "/bin/sh",
          "-c",
          remoteKillScript(pidFile, sig, this.killGraceMs),
        ])
          .catch((err: unknown) => this.log.warn({ err, container: name }, "container kill failed"))
          .finally(() => this.pendingKills.delete(kill));
        this.pendingKills.add(kill);
        return kill.then(() => {});
      },
    });
  }

  /** The workspace's files, read and written in the container (`docker exec`), as its commands see them. */
  files(workspace: Workspace): WorkspaceFiles {
    return new ShellWorkspaceFiles(this, workspace, CONTAINER_WORKSPACE);
  }

  async close(): Promise<void> {
    await Promise.all([...this.pendingKills]);
    if (!this.removeOnClose) return;
    const names = [...this.started];
    this.started.clear();
    await Promise.all(names.map((name) => this.docker(["rm", "-f", name]).catch(() => "")));
  }
}

/** Variables the docker CLI itself reads (engine address, contexts); the commands never see them. */
const CLIENT_VARIABLES = [
  "HOME",
  "DOCKER_HOST",
  "DOCKER_CONTEXT",
  "DOCKER_CONFIG",
  "DOCKER_CERT_PATH",
  "DOCKER_TLS_VERIFY",
];

/** The docker CLI's environment: PATH and LANG plus the CLI's own variables, no gateway secrets. */
function dockerClientEnv(): Record<string, string> {
  const env: Record<string, string> = { PATH: DEFAULT_PATH, LANG: "C.UTF-8" };
  for (const name of CLIENT_VARIABLES) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** Builds a `DockerBackend`. */
export function createDockerBackend(options: DockerBackendOptions = {}): DockerBackend {
  return new DockerBackend(options);
}
