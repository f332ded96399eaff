/**
 * Keeping paths inside a workspace. The file tools and every backend's `workdir` go through here, so
 * `../`, absolute paths elsewhere and symlinks pointing out of the workspace are refused in one place.
 */
import { existsSync, lstatSync, readlinkSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, posix, relative, resolve, sep } from "node:path";
import { HeraldError } from "../../core/errors.js";

/** Options of `resolveInside`. */
export interface ResolveInsideOptions {
  /**
   * The path at which commands see the workspace (the sandbox's `/workspace`): an absolute path under
   * it is mapped onto the workspace directory.
   */
  readonly virtualRoot?: string;
}

function outside(path: string, workspaceDir: string): HeraldError {
  return new HeraldError(
    `the path "${path}" is outside the workspace ${workspaceDir}: use a path relative to the workspace ` +
      `or an absolute path inside it (symlinks pointing out of the workspace are refused too)`,
    { code: "invalid_input" },
  );
}

function isWithin(root: string, target: string): boolean {
  const rel = relative(root, target);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

/**
 * Resolves `path` (relative to the workspace, or absolute) to an absolute host path inside
 * `workspaceDir`, following symlinks: the longest existing prefix is resolved with realpath and the
 * rest appended, so a path to a file not yet created works. Throws `HeraldError` ("invalid_input")
 * for anything outside the workspace, ("not_found") when the workspace itself does not exist.
 */
export function resolveInside(
  workspaceDir: string,
  path: string,
  options: ResolveInsideOptions = {},
): string {
  const root = realpathSync(workspaceDir);
  let candidate = path;
  const virtualRoot = options.virtualRoot;
  if (virtualRoot && (path === virtualRoot || path.startsWith(`${virtualRoot}/`))) {
    candidate = join(root, path.slice(virtualRoot.length));
  }
  const lexical = isAbsolute(candidate) ? resolve(candidate) : resolve(root, candidate);
  // An absolute path given through the unresolved workspace path (e.g. /tmp → /private/tmp) counts too.
  const lexicalRoot = isWithin(root, lexical) ? root : resolve(workspaceDir);
  if (!isWithin(lexicalRoot, lexical)) throw outside(path, workspaceDir);

  let existing = lexical;
  const rest: string[] = [];
  while (!existsSync(existing)) {
    const parent = resolve(existing, "..");
    if (parent === existing) break;
    rest.unshift(existing.slice(parent.length).replace(/^\//, ""));
    existing = parent;
  }
  const real = join(realpathSync(existing), ...rest);
  if (!isWithin(root, real)) throw outside(path, workspaceDir);
  return real;
}

/**
 * The absolute working directory for `workdir` under `root` in a filesystem we cannot inspect (a remote
 * host, a container): checked lexically only, so `..` escapes are refused but symlinks are not followed.
 */
export function remoteWorkdir(root: string, workdir: string | undefined): string {
  if (!workdir) return root;
  const target = posix.isAbsolute(workdir) ? posix.normalize(workdir) : posix.join(root, workdir);
  const rel = posix.relative(root, target);
  if (rel === ".." || rel.startsWith("../") || posix.isAbsolute(rel)) throw outside(workdir, root);
  return target;
}

/** Options of `workspacePath`. */
export interface WorkspacePathOptions {
  /** Where commands see the workspace (`/workspace` in the sandbox and the container). */
  readonly virtualRoot?: string | undefined;
  /** The workspace's directory on the gateway's host (absolute paths under it are taken too). */
  readonly hostRoot?: string | undefined;
}

/**
 * The gateway's first check of a path the model gave: `path` relative to the workspace, or absolute
 * under `virtualRoot` or `hostRoot`, becomes a normalised workspace-relative path ("." for the root).
 * Lexical only: the backend resolves symbolic links where the files are (see `WorkspaceFiles`).
 * @throws HeraldError `invalid_input` for a NUL byte, `..` above the root, or an absolute path elsewhere.
 */
export function workspacePath(path: string, options: WorkspacePathOptions = {}): string {
  if (path.includes("\0")) throw new HeraldError("the path contains a NUL byte", { code: "invalid_input" });
  let rel = path;
  if (posix.isAbsolute(path)) {
    const normal = posix.normalize(path);
    const under = [options.virtualRoot, options.hostRoot]
      .filter((root): root is string => Boolean(root))
      .map((root) => posix.normalize(root).replace(/\/+$/, ""))
      .find((root) => normal === root || normal.startsWith(`${root}/`));
    if (under === undefined) throw outside(path, options.virtualRoot ?? options.hostRoot ?? "root");
    rel = normal.slice(under.length).replace(/^\/+/, "");
  }
  const normal = posix.normalize(rel === "" ? "." : rel).replace(/\/+$/, "");
  if (normal === ".." || normal.startsWith("../")) throw outside(path, options.virtualRoot ?? "root");
  return normal === "" ? "." : normal;
}

const MAX_LINKS = 40;

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ENOTDIR";
}

/**
 * The real path of `abs` when only a prefix of it exists: the longest existing prefix is realpathed and
 * the rest appended. A dangling symlink on the way is followed to where it points, so writing through
 * it cannot land outside the workspace unseen.
 */
export function realpathOfPrefix(abs: string, links = 0): string {
  const tail: string[] = [];
  let head = abs;
  for (;;) {
    try {
      return join(realpathSync(head), ...tail);
    } catch (err) {
      if (!isMissing(err)) throw err;
    }
    let isLink = false;
    try {
      isLink = lstatSync(head).isSymbolicLink();
    } catch (err) {
      if (!isMissing(err)) throw err;
    }
    if (isLink) {
      if (links >= MAX_LINKS)
        throw new HeraldError(`${abs}: too many levels of symbolic links`, { code: "invalid_input" });
      const target = resolve(dirname(head), readlinkSync(head));
      return realpathOfPrefix(join(target, ...tail), links + 1);
    }
    const parent = dirname(head);
    if (parent === head) return join(head, ...tail);
    tail.unshift(basename(head));
    head = parent;
  }
}
