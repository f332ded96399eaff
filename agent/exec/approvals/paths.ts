/** Where a path argument points, seen from a workspace, without touching the file system. */
import { posix } from "node:path";

/** `inside` the workspace, the workspace `root` itself, `outside` it, or `unknown` (starts with a variable). */
export type PathPlace = "inside" | "root" | "outside" | "unknown";

/**
 * Places a path argument. With a workspace, relative paths are read from it (commands run there);
 * without one, absolute paths, `~` and paths climbing out with `..` are outside. `$HOME/…` and `~…` are
 * always outside; any other leading variable or substitution is `unknown` (it may be empty: `rm -rf $X/`).
 * @param cwd where an earlier `cd` moved (`CommandView.cwd`); relative paths are read from it.
 */
export function placeOf(path: string, workspaceDir?: string, cwd?: string): PathPlace {
  if (path.startsWith("~") || /^\$(HOME\b|\{HOME\})/.test(path)) return "outside";
  if (path.startsWith("$") || path.startsWith("`")) return "unknown";
  if (cwd !== undefined && !path.startsWith("/")) {
    if (cwd === "?") return "unknown";
    return placeOf(posix.join(cwd, path), workspaceDir);
  }
  const workspace = workspaceDir ? posix.resolve("/", workspaceDir) : undefined;
  if (path.startsWith("/")) {
    const abs = posix.resolve(path);
    if (!workspace) return "outside";
    if (abs === workspace) return "root";
    return abs.startsWith(`${workspace === "/" ? "" : workspace}/`) ? "inside" : "outside";
  }
  if (workspace) return placeOf(posix.resolve(workspace, path), workspace);
  const rel = posix.normalize(path);
  if (rel === "." || rel === "./") return "root";
  return rel === ".." || rel.startsWith("../") ? "outside" : "inside";
}

const SYSTEM_DIRS = [
  "/etc",
  "/usr",
  "/bin",
  "/sbin",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/boot",
  "/sys",
  "/proc",
  "/root",
  "/var",
  "/srv",
  "/System",
  "/Library",
  "/private/etc",
  "/private/var",
];
const NOT_SYSTEM = ["/var/tmp", "/usr/local/tmp"];

/** True for `/` and the operating system's own trees (`/etc`, `/usr`, `/boot`, …) but not `/var/tmp`. */
export function isSystemPath(path: string): boolean {
  if (!path.startsWith("/")) return false;
  const abs = posix.resolve(path);
  if (abs === "/") return true;
  const under = (dir: string) => abs === dir || abs.startsWith(`${dir}/`);
  return SYSTEM_DIRS.some(under) && !NOT_SYSTEM.some(under);
}

/** `path` read from `cwd` (see `CommandView.cwd`) when it is relative and `cwd` is known. */
export function fromCwd(path: string, cwd?: string): string {
  if (cwd === undefined || cwd === "?" || path.startsWith("/") || /^[~$`]/.test(path)) return path;
  return posix.join(cwd, path);
}

const HARMLESS_DEVICES =
  /^\/dev\/(null|zero|full|u?random|tty|stdin|stdout|stderr|ptmx|console|fd\/.*|pts\/.*|shm\/.*)$/;

/** True for a device node a write would damage: disks, partitions, memory (anything in /dev but null, tty, fd…). */
export function isDangerousDevice(path: string): boolean {
  if (!path.startsWith("/dev/")) return false;
  return !HARMLESS_DEVICES.test(posix.resolve(path));
}
