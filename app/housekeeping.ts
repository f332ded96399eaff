/**
 * The housekeeping of a process that runs turns or serves the cache: a pass at start and every 6 hours
 * deletes what HERALD_HOME gathers and nobody needs any more, and a heartbeat marks the workspaces where
 * this process runs background processes as used.
 *
 * Workspaces go when unused for `exec.workspace_retention_days`, by the record of their last use
 * (agent/exec/workspaces.ts): a turn marks its workspace when it uses it, and the heartbeat marks every few
 * minutes the workspaces where a background process of this process runs. So one rule holds wherever
 * turns run, on the embedded gateway and on each `herald worker`, also when several workers share
 * HERALD_HOME and each knows only its own processes: a workspace whose record is older than the
 * retention (days, against a heartbeat of minutes) is unused by every one of them. A pass also skips the
 * workspaces of its own running processes whatever the record says.
 *
 * Files under `HERALD_HOME/cache` go when older than `media.retention_days`: what users sent
 * (`cache/<platform>/`: attachments, voice notes, images), files of MCP tools (`cache/mcp/`) and spoken
 * replies (`cache/speech/`). The state file's own rows have theirs in gateway/maintenance.ts.
 *
 * "In use" for a cached file: a turn copies its attachments into the session's workspace when it runs,
 * and a reply's files are read when the outbox delivers it, so a cached file matters only while a turn
 * that names it is open (pending or running, also across a restart) or a reply that carries it is
 * undelivered. The gateway passes exactly those paths (`filesInUse`, from the journal and the outbox) and
 * they are kept whatever their age; that covers a gateway that was down longer than the retention and
 * finds old turns to run again at start. Everything else is judged by age alone: the retention (days)
 * is far longer than any turn or delivery, and a file being written has a fresh modification time.
 */
import { lstat, readdir, realpath, rmdir, unlink } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import type { WorkspaceManager } from "../agent/exec/index.js";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { RunnerState } from "../gateway/types.js";
import type { HeraldConfig } from "./config.js";

/**
 * The cache folders a `herald worker` writes, and so prunes: files of MCP tools (agent/tools/mcp/tools.ts;
 * a copy of each also goes into the workspace), files send_message sends (`outgoing/`, copied out of
 * the workspace) and spoken replies (agent/tools/voice/reply.ts). Inbound media are the gateway's,
 * which knows which of them open turns still need; a worker sharing HERALD_HOME leaves them to it.
 */
export const WORKER_CACHE_FOLDERS: readonly string[] = ["mcp", "outgoing", "speech"];

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
    if (info.isFile()) {
      if (info.mtimeMs > cutoff) return false;
      if (keep.has(path)) {
        report.kept++;
        return false;
      }
      try {
        await unlink(path);
      } catch (err) {
        fail(err);
        return false;
      }
      report.files++;
      report.bytes += info.size;
      report.byFolder[folder] = (report.byFolder[folder] ?? 0) + 1;
      return true;
    }
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
    // a fresh one may be a writer's about to be filled (agent/tools/mcp/content.ts: mkdir, then write). rmdir itself
    // refuses a directory that is not empty.
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

/**
 * The files open turns and undelivered replies still name: the attachments of every pending or running
 * turn in the journal, and the files of every reply waiting in the outbox. Read from the gateway's state
 * (synchronous SQLite reads). @throws when the state file is closed
 */
export function filesInUse(state: Pick<RunnerState, "turns" | "outbox">): Set<string> {
  const paths = new Set<string>();
  for (const turn of state.turns.allOpen())
    for (const attachment of turn.inbound?.attachments ?? []) paths.add(resolve(attachment.path));
  for (const item of state.outbox.pending())
    for (const file of item.message.files ?? []) paths.add(resolve(file.path));
  return paths;
}

/** How often the heartbeat marks the workspaces of running background processes as used. */
export const WORKSPACE_HEARTBEAT_MS = 5 * 60_000;

/** This process's background processes, as housekeeping asks about them (`ProcessRegistry`). */
export interface BusyWorkspaces {
  /** Whether a process of this process runs in the workspace `dir`. */
  isBusy(dir: string): boolean;
  /** The workspaces where a process of this process runs now. */
  busyWorkspaces(): readonly string[];
}

/** Workspace pruning and the heartbeat, where this process runs turns (embedded gateway, worker). */
export interface WorkspaceHousekeeping {
  manager: WorkspaceManager;
  /** `exec.workspace_retention_days` in ms. */
  retentionMs: number;
  /** This process's background processes; undefined when the terminal tools are off. */
  processes: BusyWorkspaces | undefined;
  /** @defaultValue WORKSPACE_HEARTBEAT_MS (5 minutes) */
  heartbeatMs?: number | undefined;
}

/** The workspace housekeeping of a process whose tools use `workspaces` and run `processes`. */
export function workspaceHousekeeping(
  config: Pick<HeraldConfig, "exec">,
  tools: { workspaces: WorkspaceManager; processes: BusyWorkspaces | undefined },
): WorkspaceHousekeeping {
  return {
    manager: tools.workspaces,
    retentionMs: config.exec.workspaceRetentionDays * 86_400_000,
    processes: tools.processes,
  };
}

/**
 * Marks the workspaces of this process's running background processes as used, now and every
 * `heartbeatMs`; returns the stop function (idempotent). A record that cannot be written is logged and
 * tried again at the next beat.
 */
export function startWorkspaceHeartbeat(ws: WorkspaceHousekeeping, logger: Logger): () => void {
  const beat = () => {
    for (const dir of ws.processes?.busyWorkspaces() ?? [])
      ws.manager
        .markUsed(dir)
        .catch((err) => logger.warn({ error: describeError(err) }, "workspace use not recorded"));
  };
  beat();
  const timer = setInterval(beat, ws.heartbeatMs ?? WORKSPACE_HEARTBEAT_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** What {@link startHousekeeping} prunes, and where. */
export interface HousekeepingOptions {
  /** `HERALD_HOME/cache`. */
  cacheDir: string;
  /** The cache's folders this process prunes; every one when undefined (the gateway). */
  cacheFolders?: readonly string[] | undefined;
  /** `media.retention_days` in ms. */
  mediaRetentionMs: number;
  /**
   * The paths still in use (the gateway: `filesInUse(state)`), asked once at the start of each pass.
   * May throw: the pass then leaves the cache alone rather than guess.
   */
  inUse?: (() => Iterable<string>) | undefined;
  /** Workspaces to prune and mark (where this process runs turns). */
  workspaces?: WorkspaceHousekeeping | undefined;
  logger: Logger;
  /** @defaultValue 6 hours */
  intervalMs?: number | undefined;
}

/** What one pass removed. */
export interface HousekeepingReport {
  workspaces: number;
  cache: PruneFilesReport | undefined;
}

/**
 * What `herald worker` prunes: workspaces unused for the retention (the record of their last use, which
 * this worker's heartbeat keeps fresh where its background processes run, so workers sharing
 * HERALD_HOME see each other's in use), and the cache files a worker writes (MCP tools' files, spoken
 * replies) by age alone: a worker cannot see the gateway's journal and outbox, and hands a reply's files
 * over within the turn. Inbound media are the gateway's to prune.
 */
export function workerHousekeeping(
  config: Pick<HeraldConfig, "homeDir" | "exec" | "media">,
  tools: { workspaces: WorkspaceManager; processes: BusyWorkspaces | undefined },
  logger: Logger,
): HousekeepingOptions {
  return {
    cacheDir: join(config.homeDir, "cache"),
    cacheFolders: WORKER_CACHE_FOLDERS,
    mediaRetentionMs: config.media.retentionDays * 86_400_000,
    workspaces: workspaceHousekeeping(config, tools),
    logger,
  };
}

/**
 * One pass: old workspaces, then old cache files; logs what it removed (counts and bytes). Never throws:
 * a failure is logged and the next pass tries again; an abort ends the pass quietly.
 */
export async function runHousekeeping(
  options: HousekeepingOptions,
  signal?: AbortSignal,
): Promise<HousekeepingReport> {
  const { logger } = options;
  const result: HousekeepingReport = { workspaces: 0, cache: undefined };
  // Asked before anything awaits, so the answer is the state as the pass began.
  let keep: Set<string> | undefined;
  try {
    keep = new Set([...(options.inUse?.() ?? [])].map((p) => resolve(p)));
  } catch (err) {
    logger.warn({ error: describeError(err) }, "files in use unknown, cache not pruned this time");
  }
  const ws = options.workspaces;
  if (ws) {
    try {
      const isBusy = (dir: string) => ws.processes?.isBusy(dir) ?? false;
      result.workspaces = (await ws.manager.prune(ws.retentionMs, isBusy)).length;
    } catch (err) {
      logger.warn({ error: describeError(err) }, "workspace pruning failed");
    }
  }
  if (!keep || signal?.aborted) return result;
  try {
    const cache = await pruneOldFiles(options.cacheDir, {
      olderThanMs: options.mediaRetentionMs,
      only: options.cacheFolders,
      keep,
      signal,
    });
    result.cache = cache;
    const { firstError, ...counts } = cache;
    if (cache.files + cache.directories > 0) logger.info(counts, "old cache and media files removed");
    if (cache.failed > 0)
      logger.warn({ failed: cache.failed, error: firstError }, "some cache files could not be removed");
  } catch (err) {
    if (!signal?.aborted) logger.warn({ error: describeError(err) }, "cache pruning failed");
  }
  return result;
}

/**
 * Runs a pass now and every `intervalMs` (a pass still running when the next is due is not doubled),
 * and with `workspaces` the heartbeat; returns the stop function, which also ends a pass in progress.
 * Idempotent stop.
 */
export function startHousekeeping(options: HousekeepingOptions): () => void {
  const stopHeartbeat = options.workspaces && startWorkspaceHeartbeat(options.workspaces, options.logger);
  const abort = new AbortController();
  let running: Promise<unknown> | undefined;
  const pass = () => {
    if (running || abort.signal.aborted) return;
    running = runHousekeeping(options, abort.signal).finally(() => {
      running = undefined;
    });
  };
  pass();
  const timer = setInterval(pass, options.intervalMs ?? 6 * 3_600_000);
  timer.unref();
  return () => {
    clearInterval(timer);
    stopHeartbeat?.();
    abort.abort();
  };
}
