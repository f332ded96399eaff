/**
 * A pids cgroup per sandboxed command: the process limit that holds where RLIMIT_NPROC does not.
 *
 * Linux skips RLIMIT_NPROC for processes whose real user is root, and bubblewrap started by root maps
 * the sandbox's user to root outside, so a root gateway's fork bomb would run until the host's PIDs are
 * gone. The pids controller counts every task in a cgroup whoever owns it: when the gateway can create
 * cgroups (root, or a delegated cgroup v2 subtree) each command gets its own, with `pids.max` set to the
 * sandbox's process limit, entered by a tiny shell before it execs bwrap (so no fork escapes it).
 *
 * Found from /proc/self/cgroup and /proc/self/mountinfo: the pids hierarchy of cgroup v1, or the unified
 * hierarchy of v2 when its `pids` controller is enabled (or can be) for children of our own cgroup.
 */
import { mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { isAlive } from "./child.js";

/** Prefix of the cgroups Herald creates: `herald-sbx-<gateway pid>-<n>`. */
const PREFIX = "herald-sbx-";
/** How long `release` keeps retrying while the sandbox's last tasks are being reaped. */
const RELEASE_TIMEOUT_MS = 5_000;

/** One mounted cgroup hierarchy, as /proc/self/mountinfo lists it. */
interface CgroupMount {
  readonly version: 1 | 2;
  /** The cgroup path at the mount's root (not "/" inside a cgroup namespace or a bind mount). */
  readonly root: string;
  readonly mountPoint: string;
  /** v1: the controllers of the hierarchy (super options); v2: empty. */
  readonly controllers: readonly string[];
}

/** Parses the cgroup lines of /proc/self/mountinfo. */
export function parseCgroupMounts(mountinfo: string): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of mountinfo.split("\n")) {
    const [left, right] = line.split(" - ");
    if (!left || !right) continue;
    const fields = left.split(" ");
    const [fstype, , superOptions = ""] = right.split(" ");
    const root = fields[3];
    const mountPoint = fields[4];
    if (!root || !mountPoint) continue;
    if (fstype === "cgroup2")
      mounts.push({ version: 2, root, mountPoint: unescapeOctal(mountPoint), controllers: [] });
    else if (fstype === "cgroup")
      mounts.push({
        version: 1,
        root,
        mountPoint: unescapeOctal(mountPoint),
        controllers: superOptions.split(","),
      });
  }
  return mounts;
}

/** mountinfo escapes space, tab, newline and backslash as octal. */
function unescapeOctal(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/**
 * The directory under which per-command pids cgroups can be created for this process, or undefined:
 * the v1 pids hierarchy at our own cgroup, else the v2 hierarchy at our own cgroup.
 * @param procCgroup the text of /proc/self/cgroup; @param mountinfo of /proc/self/mountinfo.
 */
export function pidsCgroupDir(
  procCgroup: string,
  mountinfo: string,
): { dir: string; version: 1 | 2 } | undefined {
  const mounts = parseCgroupMounts(mountinfo);
  const lines = procCgroup
    .split("\n")
    .map((line) => line.match(/^(\d+):([^:]*):(.*)$/))
    .filter((m): m is RegExpMatchArray => m !== null);
  const v1 = lines.find((m) => m[2]?.split(",").includes("pids"));
  const v1Mount = mounts.find((m) => m.version === 1 && m.controllers.includes("pids"));
  if (v1 && v1Mount) return { dir: under(v1Mount, v1[3] ?? "/"), version: 1 };
  const v2 = lines.find((m) => m[1] === "0" && m[2] === "");
  const v2Mount = mounts.find((m) => m.version === 2);
  if (v2 && v2Mount) return { dir: under(v2Mount, v2[3] ?? "/"), version: 2 };
  return undefined;
}

/** Where cgroup `path` is on the host's file system, given the mount that holds it. */
function under(mount: CgroupMount, path: string): string {
  const rel = mount.root !== "/" && path.startsWith(mount.root) ? path.slice(mount.root.length) : path;
  const dir = join(mount.mountPoint, rel);
  return dir.length > 1 && dir.endsWith("/") ? dir.slice(0, -1) : dir;
}

/** A cgroup lent to one command. */
export interface CommandCgroup {
  /** The `cgroup.procs` file the command's wrapper writes its pid to. */
  readonly procsFile: string;
  /** Gives the cgroup back once its tasks are gone (or removes it). Never rejects. */
  release(): Promise<void>;
}

/** Names are unique in this process, across every `PidsCgroups`. */
let nextId = 0;

/**
 * Lends per-command pids cgroups under one directory. Idle cgroups are kept for the next command
 * (up to `maxIdle`), so a command costs no mkdir or rmdir. What it does cost is the move into the
 * cgroup: the kernel waits for an RCU grace period when no move happened just before (measured here:
 * 1 ms for back-to-back commands, about 12 ms for a command after a pause), which `CgroupLauncher`
 * takes off the command's path.
 */
export class PidsCgroups {
  private readonly idle: string[] = [];
  private closed = false;

  /** @param dir a cgroup directory whose children get the pids controller. */
  constructor(
    readonly dir: string,
    private readonly version: 1 | 2,
    /** Idle cgroups kept for reuse; more are removed. @defaultValue 8 */
    private readonly maxIdle = 8,
  ) {}

  /**
   * Finds a usable directory and proves it by creating a child with a pids limit (kept as the first
   * idle one). Gives the reason when this process cannot (not root, read-only cgroupfs, no pids
   * controller).
   */
  static detect(explicitDir?: string): { cgroups: PidsCgroups } | { reason: string } {
    let found: { dir: string; version: 1 | 2 } | undefined;
    try {
      found = explicitDir
        ? { dir: explicitDir, version: readdirSync(explicitDir).includes("cgroup.controllers") ? 2 : 1 }
        : pidsCgroupDir(
            readFileSync("/proc/self/cgroup", "utf8"),
            readFileSync("/proc/self/mountinfo", "utf8"),
          );
    } catch (err) {
      return { reason: `cannot read the cgroups of this process: ${(err as Error).message}` };
    }
    if (!found) return { reason: "no pids cgroup controller is mounted" };
    const cgroups = new PidsCgroups(found.dir, found.version);
    try {
      cgroups.sweep();
      cgroups.idle.push(cgroups.make());
      return { cgroups };
    } catch (err) {
      return { reason: `cannot create a pids cgroup under ${found.dir}: ${(err as Error).message}` };
    }
  }

  /**
   * A cgroup allowing `maxProcesses` tasks: an idle one, or a new one. Throws when none can be had
   * (the caller refuses to run the command rather than run it unbounded).
   */
  acquire(maxProcesses: number): CommandCgroup {
    let dir = this.idle.pop();
    while (dir !== undefined && !isEmpty(dir)) {
      removeDir(dir);
      dir = this.idle.pop();
    }
    dir ??= this.make();
    writeFileSync(join(dir, "pids.max"), String(maxProcesses));
    const lent = dir;
    return { procsFile: join(lent, "cgroup.procs"), release: () => this.giveBack(lent) };
  }

  /** Removes the idle cgroups. Lent ones are removed when given back. Idempotent. */
  close(): void {
    this.closed = true;
    for (const dir of this.idle.splice(0)) removeDir(dir);
  }

  /** Waits (briefly) for the sandbox's last tasks to be reaped, then keeps the cgroup or removes it. */
  private async giveBack(dir: string): Promise<void> {
    const deadline = Date.now() + RELEASE_TIMEOUT_MS;
    for (let delayMs = 5; !isEmpty(dir); delayMs = Math.min(delayMs * 2, 500)) {
      if (Date.now() > deadline) return; // Tasks remain: left for the sweep of a later start.
      await sleep(delayMs);
    }
    if (this.closed || this.idle.length >= this.maxIdle) removeDir(dir);
    else this.idle.push(dir);
  }

  private make(): string {
    if (this.version === 2) this.enableController();
    const dir = join(this.dir, `${PREFIX}${process.pid}-${nextId++}`);
    mkdirSync(dir);
    return dir;
  }

  /** v2: children get a `pids.max` only when the parent delegates the controller. */
  private enableController(): void {
    const control = join(this.dir, "cgroup.subtree_control");
    if (readFileSync(control, "utf8").split(/\s+/).includes("pids")) return;
    writeFileSync(control, "+pids");
  }

  /** Removes cgroups that gateways no longer running left (empty ones only: the kernel refuses the others). */
  private sweep(): void {
    for (const name of readdirSync(this.dir)) {
      const owner = Number(name.slice(PREFIX.length).split("-")[0]);
      if (!name.startsWith(PREFIX) || !Number.isInteger(owner) || isAlive(owner)) continue;
      try {
        rmdirSync(join(this.dir, name));
      } catch {
        // Still has tasks (another gateway's live command): not ours to remove.
      }
    }
  }
}

/** Whether a cgroup has no tasks (one that is gone counts as not empty: it cannot be reused). */
function isEmpty(dir: string): boolean {
  try {
    return readFileSync(join(dir, "cgroup.procs"), "utf8").trim() === "";
  } catch {
    return false;
  }
}

/** rmdir; a cgroup that is gone or still busy is left (the sweep of a later start retries). */
function removeDir(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // ENOENT: already gone. EBUSY: tasks remain.
  }
}
