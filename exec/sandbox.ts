/**
 * `SandboxBackend`: each command runs in a bubblewrap sandbox. The workspace is the only writable
 * place that outlives the command (`/workspace`); the system is read-only, `/tmp` private, the network
 * off unless allowed, and resource limits are set by util-linux `prlimit` inside the sandbox.
 *
 * Why `prlimit` and not `ulimit`: it takes exact numbers and execs the shell, so the user's command is
 * never parsed by a wrapping shell, and dash's `ulimit` lacks some limits on some versions. RLIMIT_NPROC
 * counts per user namespace (Linux ≥ 5.14), and the sandbox has its own, so the process limit bounds
 * the sandbox alone, not every process of the gateway's user. It does not bind root's processes:
 * where the gateway can create cgroups, each command also runs in a pids cgroup of its own
 * (`cgroup.ts`, started through `cgroup-launcher.ts`). A kill reaches the sandbox's own session and pid
 * namespace (`sandbox-process.ts`).
 */
import { execFile } from "node:child_process";
import { constants, existsSync, lstatSync, readlinkSync, realpathSync } from "node:fs";
import { access, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { PidsCgroups } from "./cgroup.js";
import { CgroupLauncher } from "./cgroup-launcher.js";
import { spawnGroup } from "./child.js";
import { resolveInside } from "./paths.js";
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
} from "./types.js";
import { makeWorkspaceDir } from "./workspaces.js";

/** Where commands see their workspace. */
export const SANDBOX_WORKSPACE = "/workspace";

/** The uid and gid commands have inside the sandbox (mapped to the gateway's own user). */
const SANDBOX_ID = "1000";

/** Files of /etc that hold secrets readable by the gateway's user: hidden behind /dev/null. */
const MASKED_ETC_FILES = ["/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-"];
/** Directories of /etc that hold secrets: replaced by an empty tmpfs. */
const MASKED_ETC_DIRS = ["/etc/ssh", "/etc/ssl/private"];

/**
 * Why the sandbox's process limit does not hold for this gateway, or undefined when it does. Linux
 * skips RLIMIT_NPROC for processes of root (the check exempts the initial user), and bubblewrap started
 * by root maps the sandbox's user to root outside; a per-command pids cgroup (see `cgroup.ts`) holds
 * for root as well. Without either, a fork bomb is bounded only by the command's timeout.
 * @param pidsCgroup whether commands get a pids cgroup.
 */
export function processLimitCaveat(
  uid: number | undefined = process.getuid?.(),
  pidsCgroup = false,
): string | undefined {
  if (uid !== 0 || pidsCgroup) return undefined;
  return "the gateway runs as root and cannot create pids cgroups, so the sandbox's process limit (RLIMIT_NPROC) does not bind its commands: a fork bomb is stopped only by the command's timeout";
}

/** The fix for `processLimitCaveat`. */
export const PROCESS_LIMIT_FIX =
  "run Herald as an ordinary user, or give it a writable pids cgroup (cgroup v1 pids hierarchy, or a delegated cgroup v2 subtree: exec.sandbox.cgroupDir)";

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
}

/**
 * With the network allowed, /etc/resolv.conf must resolve: on systemd-resolved hosts it links to a file
 * under /run, which the sandbox does not mount, so that one file is bound at its own path.
 */
function resolverArgs(): string[] {
  try {
    if (!lstatSync("/etc/resolv.conf").isSymbolicLink()) return [];
    const target = realpathSync("/etc/resolv.conf");
    return target.startsWith("/etc/") || target.startsWith("/usr/") ? [] : ["--ro-bind", target, target];
  } catch {
    return []; // No resolver configured: names will not resolve, as on the host.
  }
}

/** The system part of the sandbox: /usr read-only and the merged-usr links (or binds) as on the host. */
function systemArgs(): string[] {
  const args = ["--ro-bind", "/usr", "/usr"];
  for (const top of ["/bin", "/sbin", "/lib", "/lib32", "/lib64"]) {
    if (!existsSync(top)) continue;
    const stat = lstatSync(top);
    if (stat.isSymbolicLink()) args.push("--symlink", readlinkSync(top), top);
    else args.push("--ro-bind", top, top);
  }
  args.push("--ro-bind", "/etc", "/etc");
  for (const file of MASKED_ETC_FILES) if (existsSync(file)) args.push("--ro-bind", "/dev/null", file);
  for (const dir of MASKED_ETC_DIRS) if (existsSync(dir)) args.push("--tmpfs", dir);
  return args;
}

/**
 * The complete bwrap argument list for one command: exported so it can be shown and reviewed.
 * @param workdir the working directory inside the sandbox (under `/workspace`).
 */
export function bwrapArgs(input: {
  workspaceDir: string;
  workdir: string;
  command: string;
  env: Readonly<Record<string, string>>;
  limits: ExecLimits;
  networkAllowed: boolean;
  prlimitPath: string;
}): string[] {
  const { limits } = input;
  const args = [
    "--die-with-parent",
    "--new-session",
    "--unshare-all",
    ...(input.networkAllowed ? ["--share-net"] : []),
    "--unshare-user",
    "--uid",
    SANDBOX_ID,
    "--gid",
    SANDBOX_ID,
    "--cap-drop",
    "ALL",
    "--hostname",
    "herald-sandbox",
    ...systemArgs(),
    ...(input.networkAllowed ? resolverArgs() : []),
    "--tmpfs",
    "/tmp",
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--bind",
    input.workspaceDir,
    SANDBOX_WORKSPACE,
    "--chdir",
    input.workdir,
    "--clearenv",
  ];
  for (const [name, value] of Object.entries(input.env)) args.push("--setenv", name, value);
  args.push(
    "--",
    input.prlimitPath,
    `--cpu=${limits.cpuSeconds}`,
    `--as=${limits.memoryBytes}`,
    `--nproc=${limits.maxProcesses}`,
    `--fsize=${limits.maxFileSizeBytes}`,
    "--",
    "/bin/sh",
    "-c",
    input.command,
  );
  return args;
}

/** Runs every command in a fresh bubblewrap sandbox with the workspace bind-mounted at /workspace. */
export class SandboxBackend implements ExecutionBackend {
  readonly name = "sandbox" as const;
  private readonly bwrapPath: string;
  private readonly prlimitPath: string;
  private readonly networkAllowed: boolean;
  private readonly limits: ExecLimits;
  private readonly pidsCgroupOption: boolean | string;
  private cgroups: { cgroups: PidsCgroups } | { reason: string } | undefined;
  private launcher: CgroupLauncher | undefined;

  constructor(options: SandboxBackendOptions = {}) {
    this.bwrapPath = options.bwrapPath ?? "/usr/bin/bwrap";
    this.prlimitPath = options.prlimitPath ?? "/usr/bin/prlimit";
    this.networkAllowed = options.networkAllowed ?? false;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.pidsCgroupOption = options.pidsCgroup ?? true;
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
   * How the process limit is enforced: a pids cgroup per command (`cgroupDir` names where), or
   * RLIMIT_NPROC alone with the caveat when that does not bind (a root gateway).
   */
  processLimit(): { cgroupDir?: string; caveat?: string } {
    const cgroups = this.pidsCgroups();
    const caveat = processLimitCaveat(process.getuid?.(), cgroups !== undefined);
    return { ...(cgroups ? { cgroupDir: cgroups.dir } : {}), ...(caveat ? { caveat } : {}) };
  }

  async checkAvailable(): Promise<Availability> {
    if (!(await isExecutable(this.bwrapPath))) {
      return {
        available: false,
        missing: `bubblewrap (bwrap) is not installed at ${this.bwrapPath}`,
        fix: "apt-get install bubblewrap (or set the sandbox bwrapPath option to where bwrap is)",
      };
    }
    if (!(await isExecutable(this.prlimitPath))) {
      return {
        available: false,
        missing: `prlimit is not installed at ${this.prlimitPath}`,
        fix: "apt-get install util-linux",
      };
    }
    const availability = await this.probe();
    // A gateway checks before its first command: have a shell ready in a cgroup by then.
    if (availability.available) this.cgroupLauncher()?.prepare();
    return availability;
  }

  /** Runs `true` in a real sandbox: catches kernels without user namespaces. */
  private async probe(): Promise<Availability> {
    const dir = await mkdtemp(join(tmpdir(), "herald-sandbox-probe-"));
    try {
      const args = this.argsFor({ key: "probe", dir }, { command: "true" });
      await new Promise<void>((resolve, reject) => {
        execFile(this.bwrapPath, args, { env: {}, timeout: 10_000 }, (err, _stdout, stderr) =>
          err ? reject(new Error(stderr.trim() || err.message)) : resolve(),
        );
      });
      return { available: true };
    } catch (err) {
      return {
        available: false,
        missing: `bwrap cannot create a sandbox here: ${(err as Error).message}`,
        fix:
          "enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 and " +
          "user.max_user_namespaces > 0), or in a container allow them (e.g. --security-opt seccomp=unconfined)",
      };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  async prepare(workspace: Workspace): Promise<void> {
    await makeWorkspaceDir(workspace.dir);
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

  /** The launcher into per-command pids cgroups, when there are any. */
  private cgroupLauncher(): CgroupLauncher | undefined {
    const cgroups = this.pidsCgroups();
    if (!cgroups) return undefined;
    this.launcher ??= new CgroupLauncher(cgroups, this.limits.maxProcesses);
    return this.launcher;
  }

  /** The bwrap arguments `spawn` would use (for review and the docs). */
  argsFor(workspace: Workspace, request: SpawnRequest): string[] {
    const hostWorkdir = resolveInside(workspace.dir, request.workdir ?? ".", {
      virtualRoot: SANDBOX_WORKSPACE,
    });
    const rel = relative(resolveInside(workspace.dir, "."), hostWorkdir);
    return bwrapArgs({
      workspaceDir: workspace.dir,
      workdir: rel ? `${SANDBOX_WORKSPACE}/${rel}` : SANDBOX_WORKSPACE,
      command: request.command,
      env: { PATH: DEFAULT_PATH, HOME: SANDBOX_WORKSPACE, LANG: "C.UTF-8", ...request.env },
      limits: this.limits,
      networkAllowed: this.networkAllowed,
      prlimitPath: this.prlimitPath,
    });
  }

  async close(): Promise<void> {
    await this.launcher?.close();
    this.launcher = undefined;
    if (this.cgroups && "cgroups" in this.cgroups) this.cgroups.cgroups.close();
  }
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
