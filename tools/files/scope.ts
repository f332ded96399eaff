import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve, sep } from "node:path";
import { HeraldError } from "../../core/errors.js";
import type { FileScope } from "./types.js";

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

/**
 * A `FileScope` over `root`: relative paths are read from `root`, `~` is not expanded, and every path
 * is realpathed (longest existing prefix) so `..` and symlinks are seen through.
 * @param options.confine refuse real paths outside `root` ("… is outside the workspace (…)").
 *   @defaultValue true
 * @throws HeraldError `not_found` when `root` does not exist.
 */
export function createFileScope(root: string, options: { confine?: boolean } = {}): FileScope {
  const confine = options.confine ?? true;
  let realRoot: string;
  try {
    realRoot = realpathSync(resolve(root));
  } catch (err) {
    throw new HeraldError(`workspace ${root} does not exist`, { code: "not_found", cause: err });
  }
  const prefix = realRoot.endsWith(sep) ? realRoot : realRoot + sep;
  return {
    root: realRoot,
    resolve(path: string): string {
      if (path.includes("\0"))
        throw new HeraldError("the path contains a NUL byte", { code: "invalid_input" });
      const abs = isAbsolute(path) ? resolve(path) : resolve(realRoot, path);
      const real = realpathOfPrefix(abs);
      if (confine && real !== realRoot && !real.startsWith(prefix))
        throw new HeraldError(
          `${path} is outside the workspace (${realRoot}${real !== abs ? `; it resolves to ${real}` : ""}); use a path inside it`,
          { code: "invalid_input" },
        );
      return real;
    },
  };
}
