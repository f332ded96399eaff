/**
 * A workspace's files as a git tree, written into the shadow repository by this process. The walk never
 * follows a symbolic link: a link is stored as a link (its target's text), a folder is entered only as a
 * folder, and a file is read through a descriptor opened without following links whose real path is
 * checked to be the walked one (`/proc/self/fd`), so a command that swaps a folder for a link mid-walk
 * cannot make the snapshot read a file outside the workspace. Folders named `.git` (any case) are
 * left out (git cannot store them); so are files over the size limit, FIFOs, sockets and devices.
 * A file whose size, times and inode match the stat cache is not read again.
 */
import {
  type BigIntStats,
  constants,
  type Dirent,
  lstatSync,
  readdirSync,
  readlinkSync,
  realpathSync,
} from "node:fs";
import { open, readlink } from "node:fs/promises";
import { join } from "node:path";
import { type EntryMode, storeObject, type TreeInput, treeBody, writeBlobFrom } from "./objects.js";
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
    realRoot: realpathSync(root),
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
    tree = (await walkDir(walk, "")) ?? (await storeObject(gitDir, "tree", Buffer.alloc(0)));
  } catch (err) {
    if (err instanceof TooLarge) return { kind: "too-large", reason: err.message };
    throw err;
  }
  cache.clear();
  for (const [path, entry] of walk.seen) cache.set(path, entry);
  const { files, bytes, skipped, skippedCount } = walk;
  return { kind: "tree", tree, files, bytes, skipped, skippedCount };
}

/** Hashing of changed files runs this many at once. */
const PARALLEL = 8;

/**
 * The tree of the folder `rel` ("" for the root), or undefined when it holds nothing stored. Folders
 * and stats are read synchronously (a few microseconds each: an unchanged workspace of 1,000 files is
 * walked in a few milliseconds); files the cache does not know are read and stored asynchronously,
 * several at once.
 */
async function walkDir(walk: Walk, rel: string): Promise<string | undefined> {
  let entries: Dirent[];
  try {
    entries = readdirSync(join(walk.realRoot, rel), { withFileTypes: true });
  } catch {
    return undefined; // gone or unreadable since its parent was read
  }
  const out: (TreeInput | undefined)[] = [];
  const reads: (() => Promise<void>)[] = [];
  for (const entry of entries) {
    if (/^\.git$/i.test(entry.name)) continue;
    const path = rel ? `${rel}/${entry.name}` : entry.name;
    const slot = out.push(undefined) - 1;
    if (entry.isDirectory()) {
      const oid = await walkDir(walk, path);
      if (oid) out[slot] = { name: entry.name, mode: "40000", oid };
    } else if (entry.isSymbolicLink()) {
      const target = readLinkOf(join(walk.realRoot, path));
      if (target)
        reads.push(async () => {
          out[slot] = await linkEntry(walk, entry.name, target);
        });
    } else if (entry.isFile()) {
      const known = fileEntry(walk, path, entry.name);
      if (typeof known === "function")
        reads.push(async () => {
          out[slot] = await known();
        });
      else out[slot] = known;
    }
  }
  for (let i = 0; i < reads.length; i += PARALLEL)
    await Promise.all(reads.slice(i, i + PARALLEL).map((r) => r()));
  const stored = out.filter((e): e is TreeInput => e !== undefined);
  if (stored.length === 0) return undefined;
  return storeObject(walk.gitDir, "tree", treeBody(stored));
}

function readLinkOf(abs: string): Buffer | undefined {
  try {
    return readlinkSync(abs, { encoding: "buffer" });
  } catch {
    return undefined;
  }
}

async function linkEntry(walk: Walk, name: string, target: Buffer): Promise<TreeInput> {
  return { name, mode: "120000", oid: await storeObject(walk.gitDir, "blob", target) };
}

/**
 * A file's entry when the stat cache knows it (or it is left out: undefined), else the read that makes
 * it. Throws `TooLarge` past the limits.
 */
function fileEntry(
  walk: Walk,
  path: string,
  name: string,
): TreeInput | undefined | (() => Promise<TreeInput | undefined>) {
  const abs = join(walk.realRoot, path);
  let info: BigIntStats;
  try {
    info = lstatSync(abs, { bigint: true });
  } catch {
    return undefined;
  }
  if (!info.isFile()) return undefined;
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
  return async () => {
    const oid = await hashFile(walk, abs, info.ino, size);
    if (!oid) return undefined;
    walk.seen.set(path, { stamp, oid });
    return { name, mode, oid };
  };
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
