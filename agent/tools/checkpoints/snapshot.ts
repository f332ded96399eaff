/**
 * A workspace's files as a git tree, written into the shadow repository by this process. The walk never
 * follows a symbolic link: a link is stored as a link (its target's text), a folder is entered only as a
 * folder, and a file is read through a descriptor opened without following links whose real path is
 * checked to be the walked one (`/proc/self/fd`), so a command that swaps a folder for a link mid-walk
 * cannot make the snapshot read a file outside the workspace. Folders named `.git` (any case) are
 * left out (git cannot store them); so are files over the size limit, FIFOs, sockets and devices.
 * A file whose size, times and inode match the stat cache is not read again.
 */
import { constants, type Dirent } from "node:fs";
import { lstat, open, readdir, readlink, realpath } from "node:fs/promises";
import { join } from "node:path";
import { type EntryMode, type TreeInput, treeBody, writeBlobFrom, writeObject } from "./objects.js";
import type { CheckpointLimits } from "./types.js";

/** What the stat cache remembers of a file it hashed. */
interface CachedFile {
  readonly stamp: string;
  readonly oid: string;
}

/** Path (workspace-relative) → the file's stat stamp and blob id. */
export type StatCache = Map<string, CachedFile>;

/** A snapshot's tree, or why none was taken. */
export type TreeOutcome =
  | {
      readonly kind: "tree";
      readonly tree: string;
      readonly files: number;
      readonly bytes: number;
      /** Files left out for their size (at most 10 named). */
      readonly skipped: readonly string[];
      readonly skippedCount: number;
    }
  | { readonly kind: "too-large"; readonly reason: string };

class TooLarge extends Error {}

/** The state of one walk. */
interface Walk {
  readonly gitDir: string;
  readonly realRoot: string;
  readonly cache: StatCache;
  readonly seen: StatCache;
  readonly limits: CheckpointLimits;
  files: number;
  bytes: number;
  skipped: string[];
  skippedCount: number;
  /** Whether `/proc/self/fd` answers (checked on the first file). */
  procFd: boolean | undefined;
}

/**
 * Writes the tree of the workspace at `root` into `gitDir`. `cache` is read and replaced by the files
 * seen now. Throws when the workspace cannot be read at all.
 */
export async function snapshotTree(
  root: string,
  gitDir: string,
  cache: StatCache,
  limits: CheckpointLimits,
): Promise<TreeOutcome> {
  const walk: Walk = {
    gitDir,
    realRoot: await realpath(root),
    cache,
    seen: new Map(),
    limits,
    files: 0,
    bytes: 0,
    skipped: [],
    skippedCount: 0,
    procFd: undefined,
  };
  let tree: string;
  try {
    tree = (await walkDir(walk, "")) ?? (await writeObject(gitDir, "tree", Buffer.alloc(0)));
  } catch (err) {
    if (err instanceof TooLarge) return { kind: "too-large", reason: err.message };
    throw err;
  }
  cache.clear();
  for (const [path, entry] of walk.seen) cache.set(path, entry);
  const { files, bytes, skipped, skippedCount } = walk;
  return { kind: "tree", tree, files, bytes, skipped, skippedCount };
}

/** The tree of the folder `rel` ("" for the root), or undefined when it holds nothing stored. */
async function walkDir(walk: Walk, rel: string): Promise<string | undefined> {
  const abs = join(walk.realRoot, rel);
  let entries: Dirent[];
  try {
    entries = await readdir(abs, { withFileTypes: true });
  } catch {
    return undefined; // gone or unreadable since its parent was read
  }
  const out: TreeInput[] = [];
  for (const entry of entries) {
    if (/^\.git$/i.test(entry.name)) continue;
    const path = rel ? `${rel}/${entry.name}` : entry.name;
    const stored = await entryOf(walk, entry, path);
    if (stored) out.push(stored);
  }
  if (out.length === 0) return undefined;
  return writeObject(walk.gitDir, "tree", treeBody(out));
}

async function entryOf(walk: Walk, entry: Dirent, path: string): Promise<TreeInput | undefined> {
  const name = entry.name;
  if (entry.isDirectory()) {
    const oid = await walkDir(walk, path);
    return oid ? { name, mode: "40000", oid } : undefined;
  }
  if (entry.isSymbolicLink()) {
    const target = await readlink(join(walk.realRoot, path), { encoding: "buffer" }).catch(() => undefined);
    if (!target) return undefined;
    return { name, mode: "120000", oid: await writeObject(walk.gitDir, "blob", target) };
  }
  if (!entry.isFile()) return undefined;
  return fileEntry(walk, path, name);
}

async function fileEntry(walk: Walk, path: string, name: string): Promise<TreeInput | undefined> {
  const abs = join(walk.realRoot, path);
  const info = await lstat(abs, { bigint: true }).catch(() => undefined);
  if (!info?.isFile()) return undefined;
  const size = Number(info.size);
  const { maxFileBytes, maxFiles, maxTotalBytes } = walk.limits;
  if (size > maxFileBytes) {
    walk.skippedCount++;
    if (walk.skipped.length < 10) walk.skipped.push(path);
    return undefined;
  }
  walk.files++;
  walk.bytes += size;
  if (walk.files > maxFiles) throw new TooLarge(`the workspace holds more than ${maxFiles} files`);
  if (walk.bytes > maxTotalBytes)
    throw new TooLarge(`the workspace's files add up to more than ${maxTotalBytes} bytes`);
  const mode: EntryMode = (Number(info.mode) & 0o100) !== 0 ? "100755" : "100644";
  const stamp = `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}:${mode}`;
  const cached = walk.cache.get(path);
  if (cached?.stamp === stamp) {
    walk.seen.set(path, cached);
    return { name, mode, oid: cached.oid };
  }
  const oid = await hashFile(walk, abs, info.ino, size);
  if (!oid) return undefined;
  walk.seen.set(path, { stamp, oid });
  return { name, mode, oid };
}

/** Reads the file at `abs` into a blob, or undefined when it is not the file the walk saw. */
async function hashFile(walk: Walk, abs: string, ino: bigint, size: number): Promise<string | undefined> {
  const handle = await open(abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(
    () => undefined,
  );
  if (!handle) return undefined;
  try {
    const opened = await handle.stat({ bigint: true });
    if (!opened.isFile() || opened.ino !== ino) return undefined;
    if (walk.procFd !== false) {
      const real = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
      if (walk.procFd === undefined) walk.procFd = real !== undefined;
      if (walk.procFd && real !== abs) return undefined; // a folder on the way was swapped for a link
    }
    return await writeBlobFrom(walk.gitDir, handle, size);
  } finally {
    await handle.close();
  }
}
