/**
 * Deleting old files under one folder without ever leaving it: regular files by modification time,
 * then the directories this emptied; symbolic links are neither followed nor removed, and a directory
 * swapped for a link mid-walk is skipped. The housekeeping of `HERALD_HOME/cache` runs on it
 * (`housekeeping.ts`).
 */
import { lstat, readdir, realpath, rmdir, unlink } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { describeError } from "../../core/errors.js";

/** What {@link pruneOldFiles} removes under one root. */
export interface PruneFilesOptions {
  /** Files last modified longer ago than this are removed. */
  olderThanMs: number;
  /** The root's entries to walk (`["mcp", "speech"]`); every one when undefined. */
  only?: readonly string[] | undefined;
  /** Paths kept whatever their age (as their writers named them: `join(cacheDir, …)`). */
  keep?: ReadonlySet<string> | undefined;
  /** @defaultValue Date.now() */
  now?: number | undefined;
  /** Stops the walk between two entries (the pass then rejects with the abort reason). */
  signal?: AbortSignal | undefined;
}

/** What one {@link pruneOldFiles} did: counts and bytes, never names or contents. */
export interface PruneFilesReport {
  files: number;
  bytes: number;
  /** Emptied directories removed (below the root's own folders, which writers expect to exist). */
  directories: number;
  /** Old files kept because an open turn or an undelivered reply names them. */
  kept: number;
  /** Symbolic links and other entries that are neither file nor directory, left alone. */
  skipped: number;
  /** Entries that could not be read or removed; `firstError` says why for the first. */
  failed: number;
  firstError?: string | undefined;
  /** Files removed per folder of the root (`telegram`, `mcp`, …). */
  byFolder: Record<string, number>;
}

/**
 * Removes regular files under `root` last modified more than `olderThanMs` ago, except those in `keep`,
 * then the directories this left empty (or found empty and old), but never `root` or its own folders.
 * Symbolic links are never followed nor removed (lstat throughout), and a directory whose real path is
 * no longer where the walk expects it (a parent swapped for a link mid-walk) is skipped, so nothing
 * outside `root` is touched. A missing root is an empty report. Failures on single entries are counted,
 * not thrown.
 */
export async function pruneOldFiles(
  cacheRoot: string,
  options: PruneFilesOptions,
): Promise<PruneFilesReport> {
  // Absolute, as the paths in `keep` are (writers name files by `join(cacheDir, …)`).
  const root = resolve(cacheRoot);
  const report: PruneFilesReport = {
    files: 0,
    bytes: 0,
    directories: 0,
    kept: 0,
    skipped: 0,
    failed: 0,
    byFolder: {},
  };
  const cutoff = (options.now ?? Date.now()) - options.olderThanMs;
  const keep = options.keep ?? new Set<string>();
  const fail = (err: unknown) => {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return; // gone meanwhile: nothing to do
    report.failed++;
    report.firstError ??= describeError(err);
  };
  let realRoot: string;
  let names: readonly string[];
  try {
    realRoot = await realpath(root);
    names = options.only ?? (await readdir(root));
  } catch (err) {
    fail(err);
    return report;
  }

  /** Walks `path` (inside folder `folder` of the root, `depth` 1 = the folder itself); true if removed. */
  const walk = async (path: string, folder: string, depth: number): Promise<boolean> => {
    options.signal?.throwIfAborted();
    const info = await lstat(path).catch(fail);
    if (!info) return false;
    if (info.isFile()) return removeFile(path, folder, info, { cutoff, keep, report, fail });
    if (!info.isDirectory()) {
      report.skipped++;
      return false;
    }
    const real = await realpath(path).catch(fail);
    if (real !== join(realRoot, relative(root, path))) {
      if (real) report.skipped++;
      return false;
    }
    let removedHere = 0;
    const entries = await readdir(path).catch(fail);
    for (const name of entries ?? []) if (await walk(join(path, name), folder, depth + 1)) removedHere++;
    // Writers create their own folder once (`cache/telegram`) and write into it for the length of a
    // download, so those stay. Deeper, an empty directory goes when it is old or this pass emptied it;
    // a fresh one may be a writer's about to be filled (agent/tools/mcp/content.ts: mkdir, then write).
    // rmdir itself refuses a directory that is not empty.
    if (depth === 1 || (info.mtimeMs > cutoff && removedHere === 0)) return false;
    return rmdir(path).then(
      () => {
        report.directories++;
        return true;
      },
      (err: NodeJS.ErrnoException) => {
        if (err.code !== "ENOTEMPTY" && err.code !== "EEXIST") fail(err);
        return false;
      },
    );
  };
  for (const name of names) await walk(join(root, name), name, 1);
  return report;
}

/** Removes one file when it is older than `cutoff` and not kept; true when it is gone. */
async function removeFile(
  path: string,
  folder: string,
  info: { mtimeMs: number; size: number },
  ctx: { cutoff: number; keep: ReadonlySet<string>; report: PruneFilesReport; fail: (err: unknown) => void },
): Promise<boolean> {
  const { report } = ctx;
  if (info.mtimeMs > ctx.cutoff) return false;
  if (ctx.keep.has(path)) {
    report.kept++;
    return false;
  }
  try {
    await unlink(path);
  } catch (err) {
    ctx.fail(err);
    return false;
  }
  report.files++;
  report.bytes += info.size;
  report.byFolder[folder] = (report.byFolder[folder] ?? 0) + 1;
  return true;
}
