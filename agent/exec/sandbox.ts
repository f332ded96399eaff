/**
 * `SandboxBackend`: each command runs in a bubblewrap sandbox. The workspace is the only writable
 * place that outlives the command (`/workspace`); the system is read-only, `/tmp` and `/dev/shm` private
 * and size-bounded, the network off unless allowed, and resource limits are set by util-linux `prlimit`
 * inside the sandbox. The workspace's files are read and written by a file helper in the same sandbox
 * (`files(workspace)`), never by the gateway on the host.
 *
 * Why `prlimit` and not `ulimit`: it takes exact numbers and execs the shell, so the user's command is
 * never parsed by a wrapping shell, and dash's `ulimit` lacks some limits on some versions. RLIMIT_NPROC
 * counts per user namespace (Linux ≥ 5.14), and each command has its own, so the process limit bounds
 * one command, not every process of the gateway's user. Commands never run as root outside: a root
 * gateway runs them as an unprivileged uid (`sandbox-args.ts`), and where the gateway can create
 * cgroups each command also runs in a pids cgroup of its own (`cgroup.ts`, started through
 * `cgroup-launcher.ts`). A kill reaches the sandbox's own session and pid namespace
 * (`sandbox-process.ts`).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { constants } from "node:fs";
import { access, chown, lstat, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, posix, relative } from "node:path";
import { HeraldError } from "../../core/errors.js";
import { PidsCgroups } from "./cgroup.js";
import { CgroupLauncher } from "./cgroup-launcher.js";
import { spawnGroup } from "./child.js";
import { HelperWorkspaceFiles } from "./files-helper.js";
import { FILES_HELPER_SOURCE } from "./files-helper-script.js";
import { resolveInside } from "./paths.js";
import { bwrapArgs, SANDBOX_WORKSPACE, type SandboxUser } from "./sandbox-args.js";
import { INFO_FD, readChildPid, sandboxProcess } from "./sandbox-process.js";
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
import { makeWorkspaceDir } from "./workspaces.js";

export { bwrapArgs, SANDBOX_WORKSPACE, type SandboxUser } from "./sandbox-args.js";

/**
 * The uid and gid a root gateway's sandbox runs as: 65534 (`nobody`/`nogroup`), which every Debian
 * and Ubuntu system has (base-passwd), which owns no system file and has no login; the workspaces it
 * then owns sit under HERALD_HOME, which only root can traverse, so other processes of that uid reach
 * none of them.
 */
export const DEFAULT_SANDBOX_UID = 65534;

/** Where the file helper's node is mounted when the gateway's own node is not under /usr. */
const HELPER_NODE = "/opt/herald-node/node";

/** Options of `SandboxBackend`. */
export interface SandboxBackendOptions {
  /** The bwrap binary. @defaultValue "/usr/bin/bwrap" */
  readonly bwrapPath?: string;
  /** The prlimit binary, as seen inside the sandbox (it shares /usr). @defaultValue "/usr/bin/prlimit" */
  readonly prlimitPath?: string;
  /** Let commands reach the network (`--share-net`). @defaultValue false */
  readonly networkAllowed?: boolean;
  /** @defaultValue DEFAULT_LIMITS */
  readonly limits?: Partial<ExecLimits>;
  /**
   * Give each command its own pids cgroup when this process can create one: `true` finds the
   * hierarchy from /proc/self/cgroup, a path names the cgroup directory to create them under, `false`
   * relies on RLIMIT_NPROC alone. @defaultValue true
   */
  readonly pidsCgroup?: boolean | string;
  /**
   * The unprivileged uid and gid the sandbox runs as when the gateway is root (ignored otherwise: the
   * gateway's own user is then the sandbox's). @defaultValue 65534 (nobody / nogroup)
   */
  readonly uid?: number;
  readonly gid?: number;
  /** The file helper ends after this long without a request, ms. @defaultValue 30_000 */
  readonly fileHelperIdleMs?: number;
  /** @defaultValue process.getuid() (tests pass 0 or 1000 to see both argument lists) */
  readonly gatewayUid?: number;
}

/** Runs every command in a fresh bubblewrap sandbox with the workspace bind-mounted at /workspace. */
export class SandboxBackend implements ExecutionBackend {
  readonly name = "sandbox" as const;
  private readonly bwrapPath: string;
  private readonly prlimitPath: string;
  private readonly networkAllowed: boolean;
  private readonly limits: ExecLimits;
  private readonly pidsCgroupOption: boolean | string;
  private readonly user: SandboxUser | undefined;
  private readonly fileHelperIdleMs: number;
  private cgroups: { cgroups: PidsCgroups } | { reason: string } | undefined;
  private launcher: CgroupLauncher | undefined;
  /** File helpers by workspace directory (each starts and ends its own process). */
  private readonly helpers = new Map<string, HelperWorkspaceFiles>();

  constructor(options: SandboxBackendOptions = {}) {
    this.bwrapPath = options.bwrapPath ?? "/usr/bin/bwrap";
    this.prlimitPath = options.prlimitPath ?? "/usr/bin/prlimit";
    this.networkAllowed = options.networkAllowed ?? false;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.pidsCgroupOption = options.pidsCgroup ?? true;
    this.fileHelperIdleMs = options.fileHelperIdleMs ?? 30_000;
    const uid = options.uid ?? DEFAULT_SANDBOX_UID;
    this.user =
      (options.gatewayUid ?? process.getuid?.()) === 0
        ? { uid, gid: options.gid ?? uid, setprivPath: "/usr/bin/setpriv", unsharePath: "/usr/bin/unshare" }
        : undefined;
  }

  /** The per-command pids cgroups, found (and proven) on first use; undefined when there are none. */
  private pidsCgroups(): PidsCgroups | undefined {
    if (this.pidsCgroupOption === false) return undefined;
    this.cgroups ??= PidsCgroups.detect(
      typeof this.pidsCgroupOption === "string" ? this.pidsCgroupOption : undefined,
    );
    return "cgroups" in this.cgroups ? this.cgroups.cgroups : undefined;
  }

  /**
   * How commands are bounded: a pids cgroup per command (`cgroupDir` names where) besides
   * RLIMIT_NPROC, and, for a root gateway, the unprivileged uid/gid they run as outside (`runsAs`).
   */
  processLimit(): { cgroupDir?: string; runsAs?: { uid: number; gid: number } } {
    const cgroups = this.pidsCgroups();
    return {
      ...(cgroups ? { cgroupDir: cgroups.dir } : {}),
      ...(this.user ? { runsAs: { uid: this.user.uid, gid: this.user.gid } } : {}),
    };
  }

  async checkAvailable(): Promise<Availability> {
    if (!(await isExecutable(this.bwrapPath))) {
      return {
        available: false,
        missing: `bubblewrap (bwrap) is not installed at ${this.bwrapPath}`,
        fix: "apt-get install bubblewrap (or set the sandbox bwrapPath option to where bwrap is)",
      };
    }
    for (const tool of [this.prlimitPath, this.user?.setprivPath, this.user?.unsharePath]) {
      if (tool && !(await isExecutable(tool)))
        return { available: false, missing: `${tool} is not installed`, fix: "apt-get install util-linux" };
    }
    // No shell is made ready here: a gateway whose agent runs no command keeps none (a process and
    // ~1.4 MiB). The first command enters its cgroup itself (the move's ~12 ms); the next shell is
    // made ready as it starts.
    return this.probe();
  }

  /** Runs `true` in a real sandbox: catches kernels without user namespaces, an old util-linux. */
  private async probe(): Promise<Availability> {
    const dir = await mkdtemp(join(tmpdir(), "herald-sandbox-probe-"));
    try {
      await this.prepare({ key: "probe", dir });
      const args = this.argsFor({ key: "probe", dir }, { command: "true" });
      await new Promise<void>((resolve, reject) => {
        execFile(this.bwrapPath, args, { env: {}, timeout: 10_000 }, (err, _stdout, stderr) =>
          err ? reject(new Error(stderr.trim() || err.message)) : resolve(),
        );
      });
      return { available: true };
    } catch (err) {
      const message = (err as Error).message;
      if (this.user && /unrecognized option|--map-user|--wd/.test(message))
        return {
          available: false,
          missing: `util-linux's unshare is too old for a root gateway's sandbox: ${message}`,
          fix: "install util-linux 2.38 or later (Debian 12, Ubuntu 23.04), or run Herald as an ordinary user",
        };
      return {
        available: false,
        missing: `bwrap cannot create a sandbox here: ${message}`,
        fix:
          "enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 and " +
          "user.max_user_namespaces > 0), or in a container allow them (e.g. --security-opt seccomp=unconfined)",
      };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /**
   * Creates the workspace; for a root gateway hands it to the sandbox's uid (a workspace made before,
   * owned by root, is handed over with everything in it, links not followed).
   */
  async prepare(workspace: Workspace): Promise<void> {
    await makeWorkspaceDir(workspace.dir);
    const user = this.user;
    if (!user) return;
    try {
      const info = await lstat(workspace.dir);
      if (info.uid === user.uid && info.gid === user.gid) return;
      if (info.uid === 0) await chownTree(workspace.dir, user);
      else await chown(workspace.dir, user.uid, user.gid);
    } catch (err) {
      throw new HeraldError(
        `cannot hand the workspace ${workspace.dir} to the sandbox's user ${user.uid}: ${(err as Error).message}`,
        { code: "tool_error", cause: err },
      );
    }
  }

  spawn(workspace: Workspace, request: SpawnRequest): SpawnedProcess {
    const args = ["--info-fd", String(INFO_FD), ...this.argsFor(workspace, request)];
    const launcher = this.cgroupLauncher();
    if (!launcher) {
      let childPid: Promise<number | undefined> = Promise.resolve(undefined);
      const monitor = spawnGroup(this.bwrapPath, args, {
        env: {},
        onInfoPipe: (info) => {
          childPid = readChildPid(info);
        },
      });
      return sandboxProcess(monitor, childPid);
    }
    try {
      const { proc, info } = launcher.launch(this.bwrapPath, args);
      return sandboxProcess(proc, readChildPid(info));
    } catch (err) {
      // Running it without the limit would let a fork bomb loose: refuse, as a shell would report it.
      const message = `herald: cannot start the sandbox in a pids cgroup of its own: ${(err as Error).message}`;
      return spawnGroup("/bin/sh", ["-c", 'echo "$1" >&2; exit 126', "herald-sandbox", message], { env: {} });
    }
  }

  /**
   * The workspace's files, through a file helper (node) in a sandbox like the commands': the same
   * mounts, user and limits, so the kernel keeps every read and write inside what commands can reach.
   */
  files(workspace: Workspace): WorkspaceFiles {
    let helper = this.helpers.get(workspace.dir);
    if (!helper) {
      helper = new HelperWorkspaceFiles({
        start: () => this.startHelper(workspace),
        idleMs: this.fileHelperIdleMs,
        shownRoot: SANDBOX_WORKSPACE,
      });
      this.helpers.set(workspace.dir, helper);
    }
    return helper;
  }

  /** Ends the workspace's file helper, if one runs (its session ended). */
  async release(workspace: Workspace): Promise<void> {
    await this.helpers.get(workspace.dir)?.close();
  }

  /** How many file helpers run now (an idle gateway runs none). */
  get runningFileHelpers(): number {
    return [...this.helpers.values()].filter((h) => h.active).length;
  }

  private startHelper(workspace: Workspace): ChildProcess {
    const node = process.execPath;
    const inUsr = node.startsWith("/usr/");
    const args = this.argsFor(
      workspace,
      {},
      [inUsr ? node : HELPER_NODE, "--max-old-space-size=64", "-e", FILES_HELPER_SOURCE, SANDBOX_WORKSPACE],
      inUsr ? [] : ["--ro-bind", node, HELPER_NODE],
    );
    return spawn(this.bwrapPath, args, { env: {}, stdio: ["pipe", "pipe", "pipe"] });
  }

  /** The launcher into per-command pids cgroups, when there are any. */
  private cgroupLauncher(): CgroupLauncher | undefined {
    const cgroups = this.pidsCgroups();
    if (!cgroups) return undefined;
    this.launcher ??= new CgroupLauncher(cgroups, this.limits.maxProcesses);
    return this.launcher;
  }

  /**
   * The bwrap arguments `spawn` would use (for review and the docs); `argv` replaces the shell running
   * `request.command` (the file helper), `extraMounts` adds mounts.
   */
  argsFor(
    workspace: Workspace,
    request: Partial<SpawnRequest>,
    argv?: readonly string[],
    extraMounts: readonly string[] = [],
  ): string[] {
    const hostWorkdir = resolveInside(workspace.dir, request.workdir ?? ".", {
      virtualRoot: SANDBOX_WORKSPACE,
    });
    const rel = relative(resolveInside(workspace.dir, "."), hostWorkdir);
    return bwrapArgs({
      workspaceDir: workspace.dir,
      workdir: rel ? `${SANDBOX_WORKSPACE}/${rel}` : SANDBOX_WORKSPACE,
      argv: argv ?? ["/bin/sh", "-c", request.command ?? "true"],
      env: { PATH: DEFAULT_PATH, HOME: SANDBOX_WORKSPACE, LANG: "C.UTF-8", ...request.env },
      limits: this.limits,
      networkAllowed: this.networkAllowed,
      prlimitPath: this.prlimitPath,
      user: this.user,
      extraMounts: [...extraMounts, ...(request.mounts ?? []).flatMap(mountArgs)],
    });
  }

  async close(): Promise<void> {
    const helpers = [...this.helpers.values()];
    this.helpers.clear();
    await Promise.all(helpers.map((h) => h.close()));
    await this.launcher?.close();
    this.launcher = undefined;
    if (this.cgroups && "cgroups" in this.cgroups) this.cgroups.cgroups.close();
  }
}

/** A request's mount: its parent made traversable for the sandbox's user (bwrap makes new ones 0700). */
function mountArgs(m: { hostPath: string; path: string }): string[] {
  const parent = posix.dirname(m.path);
  return [...(parent === "/" ? [] : ["--perms", "0755", "--dir", parent]), "--ro-bind", m.hostPath, m.path];
}

/** `chown -R -P`: every entry of `dir` to `user`, symbolic links themselves, never their targets. */
function chownTree(dir: string, user: SandboxUser): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(
      "chown",
      ["-R", "-P", `${user.uid}:${user.gid}`, "--", dir],
      { env: { PATH: DEFAULT_PATH } },
      (err, _stdout, stderr) => (err ? reject(new Error(stderr.trim() || err.message)) : resolve()),
    );
  });
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Builds a `SandboxBackend`. */
export function createSandboxBackend(options: SandboxBackendOptions = {}): SandboxBackend {
  return new SandboxBackend(options);
}
