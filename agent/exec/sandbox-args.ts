/**
 * The bubblewrap command line of the sandbox, for commands and for the file helper alike: the same
 * mounts, the same user, the same limits. Exported so it can be shown and reviewed.
 *
 * Who the sandbox's processes are outside: for a gateway run by an ordinary user, bubblewrap maps the
 * sandbox's user (uid 1000 inside) to that user. For a gateway run by root that mapping would make them
 * root outside (RLIMIT_NPROC skips root, and files they write are root's), so there bubblewrap sets up
 * the mounts as root, keeps only CAP_SETUID and CAP_SETGID, and the command is started through
 * `setpriv` as an unprivileged uid (`sandboxUser`, 65534 by default) and then `unshare --user` into a
 * user namespace of its own where it is uid 1000 again: RLIMIT_NPROC then counts that one command's
 * processes, as it does for an ordinary gateway. (bwrap cannot simply be started as the unprivileged
 * uid: it resolves the workspace's path as that uid, and HERALD_HOME under /root is not traversable.)
 */
import { existsSync, lstatSync, readlinkSync, realpathSync } from "node:fs";
import type { ExecLimits } from "./types.js";

/** Where commands see their workspace. */
export const SANDBOX_WORKSPACE = "/workspace";

/** The uid and gid commands have inside the sandbox. */
export const SANDBOX_ID = "1000";

/** Files of /etc that hold secrets readable by the gateway's user: hidden behind /dev/null. */
const MASKED_ETC_FILES = ["/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-"];
/** Directories of /etc that hold secrets: replaced by an empty, read-only tmpfs. */
const MASKED_ETC_DIRS = ["/etc/ssh", "/etc/ssl/private"];

/** The unprivileged user a root gateway's sandbox runs as, and the tools that switch to it. */
export interface SandboxUser {
  readonly uid: number;
  readonly gid: number;
  /** util-linux setpriv. @defaultValue "/usr/bin/setpriv" */
  readonly setprivPath: string;
  /** util-linux unshare (2.38 or later: `--map-user`, `--wd`). @defaultValue "/usr/bin/unshare" */
  readonly unsharePath: string;
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
  for (const dir of MASKED_ETC_DIRS) if (existsSync(dir)) args.push("--tmpfs", dir, "--remount-ro", dir);
  return args;
}

/**
 * The private, size-bounded scratch space: `/tmp` and `/dev/shm` each a tmpfs of `tmpSizeBytes` (they
 * are memory: unbounded, one command could hold half the host's RAM there), and the rest of `/dev`
 * read-only (bwrap's `/dev` is a tmpfs too; its devices stay usable).
 */
function scratchArgs(tmpSizeBytes: number): string[] {
  const size = String(tmpSizeBytes);
  return [
    ...["--perms", "1777", "--size", size, "--tmpfs", "/tmp"],
    ...["--proc", "/proc", "--dev", "/dev"],
    ...["--perms", "1777", "--size", size, "--tmpfs", "/dev/shm"],
    ...["--remount-ro", "/dev"],
  ];
}

/** Input of `bwrapArgs`. */
export interface BwrapInput {
  readonly workspaceDir: string;
  /** The working directory inside the sandbox (under `/workspace`). */
  readonly workdir: string;
  /** The program and its arguments, run under the limits (a command is `/bin/sh -c <line>`). */
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly limits: ExecLimits;
  readonly networkAllowed: boolean;
  readonly prlimitPath: string;
  /** Set when the gateway is root: who the sandbox runs as outside. */
  readonly user?: SandboxUser | undefined;
  /** Extra mounts, e.g. a program bound read-only (`--ro-bind src dest`). */
  readonly extraMounts?: readonly string[] | undefined;
}

/** The complete bwrap argument list for one program in the sandbox. */
export function bwrapArgs(input: BwrapInput): string[] {
  const { limits, user } = input;
  const identity = user
    ? [
        ...["--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"],
        ...(input.networkAllowed ? [] : ["--unshare-net"]),
        ...["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"],
      ]
    : [
        "--unshare-all",
        ...(input.networkAllowed ? ["--share-net"] : []),
        ...["--unshare-user", "--uid", SANDBOX_ID, "--gid", SANDBOX_ID, "--cap-drop", "ALL"],
      ];
  const args = [
    "--die-with-parent",
    "--new-session",
    ...identity,
    "--hostname",
    "herald-sandbox",
    ...systemArgs(),
    ...(input.networkAllowed ? resolverArgs() : []),
    ...scratchArgs(limits.tmpSizeBytes),
    "--bind",
    input.workspaceDir,
    SANDBOX_WORKSPACE,
    ...(input.extraMounts ?? []),
    // As root (no DAC override kept) bwrap cannot enter a workspace of the sandbox's user: unshare does.
    "--chdir",
    user ? "/" : input.workdir,
    "--clearenv",
  ];
  for (const [name, value] of Object.entries(input.env)) args.push("--setenv", name, value);
  args.push("--");
  if (user) {
    args.push(user.setprivPath, `--reuid=${user.uid}`, `--regid=${user.gid}`, "--clear-groups", "--");
    args.push(user.unsharePath, "--user", `--map-user=${SANDBOX_ID}`, `--map-group=${SANDBOX_ID}`);
    args.push(`--wd=${input.workdir}`, "--");
  }
  args.push(
    input.prlimitPath,
    `--cpu=${limits.cpuSeconds}`,
    `--as=${limits.memoryBytes}`,
    `--nproc=${limits.maxProcesses}`,
    `--fsize=${limits.maxFileSizeBytes}`,
    "--",
    ...input.argv,
  );
  return args;
}
