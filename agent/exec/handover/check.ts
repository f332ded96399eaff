/**
 * What a manifest may hold, checked on both sides (the gateway on a commit, a worker on a pull): every
 * path relative, `/`-separated, without `.`, `..` or empty segments, NUL or a leading `/`; every link
 * relative and resolving inside the workspace; no path below a file or a link; at most `maxEntries`
 * paths and `maxBytes` of file content. A manifest that breaks one is refused whole, naming the path.
 */
import { posix } from "node:path";
import { HeraldError } from "../../../core/errors.js";
import type { Manifest, ManifestChanges, ManifestEntry } from "./types.js";

/** Caps of a manifest. */
export interface ManifestLimits {
  /** Bytes of file content in the whole workspace (the workspace quota). */
  readonly maxBytes: number;
  /** Paths in the whole workspace. @defaultValue 200_000 */
  readonly maxEntries?: number | undefined;
}

const MAX_PATH_BYTES = 4096;
const MAX_SEGMENT_BYTES = 255;

function refused(message: string): HeraldError {
  return new HeraldError(`workspace hand-over refused: ${message}`, { code: "invalid_input" });
}

/** Throws `invalid_input` unless `path` is a safe workspace-relative path (see the module comment). */
export function checkEntryPath(path: string): void {
  const shown = JSON.stringify(path.slice(0, 200));
  if (path.length === 0) throw refused("an empty path");
  if (path.includes("\0")) throw refused(`the path ${shown} holds a NUL byte`);
  if (path.startsWith("/")) throw refused(`the path ${shown} is absolute`);
  if (Buffer.byteLength(path) > MAX_PATH_BYTES) throw refused(`the path ${shown}… is over 4096 bytes`);
  for (const segment of path.split("/")) {
    if (segment === "..") throw refused(`the path ${shown} leaves the workspace (..)`);
    if (segment === "" || segment === ".") throw refused(`the path ${shown} is not in normal form`);
    if (Buffer.byteLength(segment) > MAX_SEGMENT_BYTES) throw refused(`a name in ${shown} is over 255 bytes`);
  }
}

/** Throws `invalid_input` unless the link at `path` to `target` stays inside the workspace. */
export function checkLinkTarget(path: string, target: string): void {
  const shown = `${JSON.stringify(path)} → ${JSON.stringify(target)}`;
  if (target.includes("\0")) throw refused(`the link ${shown} holds a NUL byte`);
  if (posix.isAbsolute(target)) throw refused(`the link ${shown} points outside the workspace (absolute)`);
  const resolved = posix.normalize(posix.join(posix.dirname(path), target));
  if (resolved === ".." || resolved.startsWith("../"))
    throw refused(`the link ${shown} points outside the workspace`);
}

/** Every proper ancestor of `path`: `a/b/c` → `a`, `a/b`. */
function ancestors(path: string): string[] {
  const parts = path.split("/");
  return parts.slice(1).map((_, i) => parts.slice(0, i + 1).join("/"));
}

/**
 * Checks a whole manifest (see the module comment); returns its bytes of file content.
 * @throws HeraldError `invalid_input` naming the first offending path.
 */
export function checkManifest(manifest: Manifest, limits: ManifestLimits): number {
  const paths = Object.keys(manifest);
  const maxEntries = limits.maxEntries ?? 200_000;
  if (paths.length > maxEntries) throw refused(`${paths.length} paths, over the limit of ${maxEntries}`);
  let bytes = 0;
  for (const path of paths) {
    checkEntryPath(path);
    const entry = manifest[path] as ManifestEntry;
    if (entry.kind === "link") checkLinkTarget(path, entry.target);
    if (entry.kind === "file") bytes += entry.sizeBytes;
    for (const parent of ancestors(path)) {
      const above = manifest[parent];
      if (above && above.kind !== "dir")
        throw refused(
          `the path ${JSON.stringify(path)} lies below the ${above.kind} ${JSON.stringify(parent)}`,
        );
    }
  }
  if (bytes > limits.maxBytes)
    throw refused(`${bytes} bytes of files, over the workspace quota of ${limits.maxBytes} bytes`);
  return bytes;
}

/**
 * `current` with `changes` applied, path by path (the later writer wins a path): a removed path takes
 * what lies below it along, and a path set where an ancestor is a file or link replaces that ancestor
 * with its folder. Pure: `current` is not modified.
 */
export function applyChanges(current: Manifest, changes: ManifestChanges): Manifest {
  const next: Manifest = { ...current };
  const dropBelow = (path: string) => {
    const prefix = `${path}/`;
    for (const key of Object.keys(next)) if (key.startsWith(prefix)) delete next[key];
  };
  for (const path of changes.removed) {
    const was = next[path];
    delete next[path];
    if (was?.kind === "dir") dropBelow(path);
  }
  for (const [path, entry] of Object.entries(changes.set)) {
    for (const parent of ancestors(path)) {
      const above = next[parent];
      if (above && above.kind !== "dir") delete next[parent];
      if (!next[parent]) next[parent] = { kind: "dir", mode: 0o755 };
    }
    if (entry.kind !== "dir" && next[path]?.kind === "dir") dropBelow(path);
    next[path] = entry;
  }
  return next;
}

/** True when two entries describe the same thing. */
export function sameEntry(a: ManifestEntry | undefined, b: ManifestEntry | undefined): boolean {
  if (!a || !b || a.kind !== b.kind) return false;
  if (a.kind === "file" && b.kind === "file") return a.sha256 === b.sha256 && a.mode === b.mode;
  if (a.kind === "dir" && b.kind === "dir") return a.mode === b.mode;
  return a.kind === "link" && b.kind === "link" && a.target === b.target;
}

/** What turns `from` into `to`. */
export function diffManifests(from: Manifest, to: Manifest): ManifestChanges {
  const set: Manifest = {};
  for (const [path, entry] of Object.entries(to)) if (!sameEntry(from[path], entry)) set[path] = entry;
  const removed = Object.keys(from).filter((path) => !(path in to));
  return { set, removed };
}
