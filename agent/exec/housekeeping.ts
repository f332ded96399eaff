/**
 * The housekeeping of a process that runs turns or serves the cache: a pass at start and every 6 hours
 * deletes what HERALD_HOME gathers and nobody needs any more, and a heartbeat marks the workspaces where
 * this process runs background processes as used.
 *
 * Workspaces go when unused for `exec.workspace_retention_days`, by the record of their last use
 * (`workspaces.ts`): a turn marks its workspace when it uses it, and the heartbeat marks every few
 * minutes the workspaces where a background process of this process runs. So one rule holds wherever
 * turns run, on the embedded gateway and on each `herald worker`, also when several workers share
 * HERALD_HOME and each knows only its own processes: a workspace whose record is older than the
 * retention (days, against a heartbeat of minutes) is unused by every one of them. A pass also skips the
 * workspaces of its own running processes whatever the record says. A pruned workspace's checkpoints
 * (`HERALD_HOME/checkpoints/<workspace>/`) go with it, and each backend releases it.
 *
 * Files under `HERALD_HOME/cache` go when older than `media.retention_days` (`prune-files.ts`): what
 * users sent (`cache/<platform>/`: attachments, voice notes, images), files of MCP tools (`cache/mcp/`)
 * and spoken replies (`cache/speech/`). The state file's own rows have theirs in gateway/maintenance.ts.
 *
 * "In use" for a cached file: a turn copies its attachments into the session's workspace when it runs,
 * and a reply's files are read when the outbox delivers it, so a cached file matters only while a turn
 * that names it is open (pending or running, also across a restart) or a reply that carries it is
 * undelivered. The gateway passes exactly those paths (`filesInUse` of gateway/maintenance.ts, from the
 * journal and the outbox) and they are kept whatever their age; that covers a gateway that was down
 * longer than the retention and finds old turns to run again at start. Everything else is judged by age
 * alone: the retention (days) is far longer than any turn or delivery, and a file being written has a
 * fresh modification time.
 */
import { join, resolve } from "node:path";
import { describeError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import { type PruneFilesReport, pruneOldFiles } from "./prune-files.js";
import type { ExecutionBackend } from "./types.js";
import type { WorkspaceManager } from "./workspaces.js";

/** The settings housekeeping reads (`HeraldConfig` has this shape). */
export interface HousekeepingSettings {
  homeDir: string;
  exec: { workspaceRetentionDays: number };
  media: { retentionDays: number };
}

/**
 * The cache folders a `herald worker` writes, and so prunes: files of MCP tools (agent/tools/mcp/tools.ts;
 * a copy of each also goes into the workspace), files send_message sends (`outgoing/`, copied out of
 * the workspace) and spoken replies (agent/tools/voice/reply.ts). Inbound media are the gateway's,
 * which knows which of them open turns still need; a worker sharing HERALD_HOME leaves them to it.
 */
export const WORKER_CACHE_FOLDERS: readonly string[] = ["mcp", "outgoing", "speech"];

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
  /** Told of each pruned workspace (the backend's `release`: a cloud sandbox is deleted); never throws. */
  release?: ((dir: string) => Promise<void>) | undefined;
}

/**
 * The workspace housekeeping of a process whose tools use `workspaces` and run `processes`; a pruned
 * workspace is released on each of `backends` (every agent's: each releases only what it holds).
 */
export function workspaceHousekeeping(
  config: Pick<HousekeepingSettings, "exec">,
  tools: {
    workspaces: WorkspaceManager;
    processes: BusyWorkspaces | undefined;
    backend?: Pick<ExecutionBackend, "release"> | undefined;
    backends?: readonly Pick<ExecutionBackend, "release">[] | undefined;
    /** Deletes what belongs to a pruned workspace outside it (its checkpoints). May throw: logged. */
    workspacePruned?: ((dir: string) => Promise<void>) | undefined;
  },
  logger?: Logger,
): WorkspaceHousekeeping {
  const backends = (tools.backends ?? (tools.backend ? [tools.backend] : [])).filter((b) => b.release);
  const pruned = tools.workspacePruned;
  return {
    manager: tools.workspaces,
    retentionMs: config.exec.workspaceRetentionDays * 86_400_000,
    processes: tools.processes,
    release:
      backends.length || pruned
        ? async (dir) => {
            await pruned?.(dir).catch((err: unknown) =>
              logger?.warn(
                { dir, error: describeError(err) },
                "checkpoints of a pruned workspace not removed",
              ),
            );
            for (const backend of backends) await backend.release?.({ key: "", dir });
          }
        : undefined,
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
   * The paths still in use (the gateway: `filesInUse(state)` of gateway/maintenance.ts), asked once at the start of each pass.
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
  config: HousekeepingSettings,
  tools: {
    workspaces: WorkspaceManager;
    processes: BusyWorkspaces | undefined;
    backend?: Pick<ExecutionBackend, "release"> | undefined;
    backends?: readonly Pick<ExecutionBackend, "release">[] | undefined;
    workspacePruned?: ((dir: string) => Promise<void>) | undefined;
  },
  logger: Logger,
): HousekeepingOptions {
  return {
    cacheDir: join(config.homeDir, "cache"),
    cacheFolders: WORKER_CACHE_FOLDERS,
    mediaRetentionMs: config.media.retentionDays * 86_400_000,
    workspaces: workspaceHousekeeping(config, tools, logger),
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
      const pruned = await ws.manager.prune(ws.retentionMs, isBusy);
      result.workspaces = pruned.length;
      for (const dir of pruned) await ws.release?.(dir);
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
