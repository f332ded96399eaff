/**
 * Cron jobs and their run history in `state.db` (tables of migration v2), on a connection of its own so
 * the CLI and the gateway use the same code. A tick is claimed with a compare-and-set of the job's
 * `next_run_at` (moving it past the tick) in one transaction with the run row it queues: a tick is
 * claimed once, whichever process or restart sees it again.
 */
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { HeraldError } from "../core/errors.js";
import { migrate } from "../sessions/index.js";
import type { CronJob, CronJobSpec, CronRun, CronRunStatus } from "./types.js";

interface JobRow {
  id: string;
  spec: string;
  paused: number;
  next_run_at: number | null;
  last_tick_at: number | null;
  failures: number;
  skip_ticks: number;
  failure_reported: number;
  reported_targets: string;
  created_at: number;
  updated_at: number;
}

interface RunRow {
  id: string;
  job_id: string;
  tick_at: number;
  kind: CronRun["kind"];
  status: CronRunStatus;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  session_key: string | null;
  output: string | null;
  error: string | null;
}

const orUndefined = <T>(v: T | null): T | undefined => (v === null ? undefined : v);

function toJob(row: JobRow): CronJob {
  return {
    ...(JSON.parse(row.spec) as CronJobSpec),
    id: row.id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    paused: row.paused === 1,
    nextRunAt: orUndefined(row.next_run_at),
    lastTickAt: orUndefined(row.last_tick_at),
    failures: row.failures,
    skipTicks: row.skip_ticks,
    failureReported: row.failure_reported === 1,
    reportedTargets: JSON.parse(row.reported_targets) as string[],
  };
}

function toRun(row: RunRow): CronRun {
  return {
    id: row.id,
    jobId: row.job_id,
    tickAt: row.tick_at,
    kind: row.kind,
    status: row.status,
    createdAt: row.created_at,
    startedAt: orUndefined(row.started_at),
    finishedAt: orUndefined(row.finished_at),
    sessionKey: orUndefined(row.session_key),
    output: orUndefined(row.output),
    error: orUndefined(row.error),
  };
}

/** The spec part of a job (what its creator chose), as stored. */
export function specOf(job: CronJobSpec): CronJobSpec {
  const {
    name,
    prompt,
    schedule,
    deliver,
    origin,
    createdBy,
    originChatType,
    agent,
    skills,
    toolsets,
    model,
    timeoutMs,
    missedRuns,
  } = job;
  return {
    name,
    prompt,
    schedule,
    deliver,
    origin,
    createdBy,
    originChatType,
    agent,
    skills,
    toolsets,
    model,
    timeoutMs,
    missedRuns,
  };
}

/** Deterministic, colon-free id of a job's run for a tick (also the run's turn id). */
export function runIdFor(jobId: string, tickAt: number, kind: CronRun["kind"]): string {
  return `c${createHash("sha256").update(`${jobId}\u0000${tickAt}\u0000${kind}`).digest("hex").slice(0, 24)}`;
}

/** What claiming a tick writes. */
export interface TickClaim {
  /** The tick claimed (the latest one due). */
  tickAt: number;
  /** The job's next tick after this one; undefined when it is done (a one-shot). */
  nextRunAt: number | undefined;
  /** Whether this tick is one the job skips while backing off (no run; the skip count goes down). */
  consumeSkip: boolean;
  /** Whether a run is queued for the tick (false: the tick was missed and is skipped). */
  queueRun: boolean;
}

/** Final states a run can be finished with. */
export type FinalRunStatus = Exclude<CronRunStatus, "queued" | "running">;

/**
 * Jobs and runs on `state.db`. Build with `SqliteCronStore.open(path)` (its own connection; `close()` when
 * done) or `SqliteCronStore.on(connection)` (a connection someone else owns, such as the gateway's state).
 */
export class SqliteCronStore {
  readonly #db: Database.Database;
  readonly #owned: boolean;
  readonly #stmt;

  private constructor(db: Database.Database, owned: boolean) {
    this.#db = db;
    this.#owned = owned;
    this.#stmt = {
      getJob: db.prepare<[string], JobRow>("SELECT * FROM cron_jobs WHERE id = ?"),
      listJobs: db.prepare<[], JobRow>("SELECT * FROM cron_jobs ORDER BY created_at, id"),
      insertJob: db.prepare(
        `INSERT INTO cron_jobs (id, spec, paused, next_run_at, created_at, updated_at)
         VALUES (@id, @spec, @paused, @nextRunAt, @now, @now)`,
      ),
      updateSpec: db.prepare(
        "UPDATE cron_jobs SET spec = @spec, next_run_at = @nextRunAt, updated_at = @now WHERE id = @id",
      ),
      setPaused: db.prepare(
        "UPDATE cron_jobs SET paused = @paused, next_run_at = @nextRunAt, updated_at = @now WHERE id = @id",
      ),
      deleteJob: db.prepare<[string]>("DELETE FROM cron_jobs WHERE id = ?"),
      deleteRuns: db.prepare<[string]>("DELETE FROM cron_runs WHERE job_id = ?"),
      claim: db.prepare(
        `UPDATE cron_jobs SET last_tick_at = @tickAt, next_run_at = @nextRunAt,
           skip_ticks = CASE WHEN @consumeSkip = 1 THEN max(skip_ticks - 1, 0) ELSE skip_ticks END
         WHERE id = @id AND paused = 0 AND next_run_at = @expected`,
      ),
      insertRun: db.prepare(
        `INSERT OR IGNORE INTO cron_runs (id, job_id, tick_at, kind, status, created_at)
         VALUES (@id, @jobId, @tickAt, @kind, 'queued', @now)`,
      ),
      startRun: db.prepare(
        `UPDATE cron_runs SET status = 'running', started_at = @now, session_key = @sessionKey
         WHERE id = @id AND status = 'queued'`,
      ),
      finishRun: db.prepare(
        `UPDATE cron_runs SET status = @status, finished_at = @now, output = @output, error = @error
         WHERE id = @id AND status IN ('queued', 'running')`,
      ),
      getRun: db.prepare<[string], RunRow>("SELECT * FROM cron_runs WHERE id = ?"),
      openRuns: db.prepare<[], RunRow>(
        "SELECT * FROM cron_runs WHERE status IN ('queued', 'running') ORDER BY created_at, rowid",
      ),
      runs: db.prepare<[string, number], RunRow>(
        "SELECT * FROM cron_runs WHERE job_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?",
      ),
      pruneRuns: db.prepare<[string, string, number]>(
        `DELETE FROM cron_runs WHERE job_id = ? AND status NOT IN ('queued', 'running') AND id NOT IN
           (SELECT id FROM cron_runs WHERE job_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?)`,
      ),
      success: db.prepare<[string]>(
        "UPDATE cron_jobs SET failures = 0, skip_ticks = 0, failure_reported = 0 WHERE id = ?",
      ),
      failure: db.prepare(
        `UPDATE cron_jobs SET failures = @failures, skip_ticks = @skipTicks, failure_reported = 1
         WHERE id = @id`,
      ),
      reported: db.prepare<[string, string]>("UPDATE cron_jobs SET reported_targets = ? WHERE id = ?"),
      version: db.prepare<[], { value: number }>("SELECT value FROM cron_meta WHERE key = 'version'"),
    };
  }

  /**
   * Opens the state database at `path` (creating and migrating it as `SqliteState` does).
   * @throws HeraldError `state_error` naming the file when it cannot be opened.
   */
  static open(path: string, options: { busyTimeoutMs?: number } = {}): SqliteCronStore {
    let db: Database.Database | undefined;
    try {
      mkdirSync(dirname(path), { recursive: true });
      db = new Database(path);
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
      db.pragma(`busy_timeout = ${Math.trunc(options.busyTimeoutMs ?? 5000)}`);
      migrate(db);
      return new SqliteCronStore(db, true);
    } catch (cause) {
      db?.close();
      if (cause instanceof HeraldError) throw cause;
      throw new HeraldError(
        `Cannot open the cron tables in ${path}: ${cause instanceof Error ? cause.message : String(cause)}. ` +
          "Check that the file is a Herald state.db and that its directory is writable.",
        { code: "state_error", cause },
      );
    }
  }

  /**
   * The store on an open, migrated connection it does not own (`close()` leaves it open). The gateway
   * uses its state's connection, so cron writes join the state's transactions and commit batches.
   */
  static on(db: Database.Database): SqliteCronStore {
    return new SqliteCronStore(db, false);
  }

  /** Runs `fn` in one immediate transaction (synchronous; nested calls are savepoints). */
  transaction<T>(fn: () => T): T {
    return this.#db.transaction(fn).immediate();
  }

  insertJob(id: string, spec: CronJobSpec, nextRunAt: number | undefined, now: number): CronJob {
    this.#stmt.insertJob.run({
      id,
      spec: JSON.stringify(specOf(spec)),
      paused: 0,
      nextRunAt: nextRunAt ?? null,
      now,
    });
    return this.getJob(id)!;
  }

  getJob(id: string): CronJob | undefined {
    const row = this.#stmt.getJob.get(id);
    return row ? toJob(row) : undefined;
  }

  listJobs(): CronJob[] {
    return this.#stmt.listJobs.all().map(toJob);
  }

  /** Replaces a job's spec and next tick; false for an unknown id. */
  updateSpec(id: string, spec: CronJobSpec, nextRunAt: number | undefined, now: number): boolean {
    const info = this.#stmt.updateSpec.run({
      id,
      spec: JSON.stringify(specOf(spec)),
      nextRunAt: nextRunAt ?? null,
      now,
    });
    return info.changes === 1;
  }

  setPaused(id: string, paused: boolean, nextRunAt: number | undefined, now: number): boolean {
    return (
      this.#stmt.setPaused.run({ id, paused: paused ? 1 : 0, nextRunAt: nextRunAt ?? null, now }).changes ===
      1
    );
  }

  /** Deletes a job and its run history; false for an unknown id. */
  deleteJob(id: string): boolean {
    return this.transaction(() => {
      this.#stmt.deleteRuns.run(id);
      return this.#stmt.deleteJob.run(id).changes === 1;
    });
  }

  /**
   * Claims a tick of job `id` if its `next_run_at` is still `expected` (and it is not paused), moving
   * it to `claim.nextRunAt` and queueing the tick's run, in one transaction. Returns the queued run,
   * `"claimed"` when the tick was claimed without a run, or undefined when someone else claimed it.
   */
  claimTick(id: string, expected: number, claim: TickClaim, now: number): CronRun | "claimed" | undefined {
    return this.transaction(() => {
      const info = this.#stmt.claim.run({
        id,
        expected,
        tickAt: claim.tickAt,
        nextRunAt: claim.nextRunAt ?? null,
        consumeSkip: claim.consumeSkip ? 1 : 0,
      });
      if (info.changes !== 1) return undefined;
      if (!claim.queueRun) return "claimed" as const;
      return this.addRun(id, claim.tickAt, "scheduled", now);
    });
  }

  /** Queues a run (idempotent by job, tick and kind); returns it as stored. */
  addRun(jobId: string, tickAt: number, kind: CronRun["kind"], now: number): CronRun {
    const id = runIdFor(jobId, tickAt, kind);
    this.#stmt.insertRun.run({ id, jobId, tickAt, kind, now });
    return this.getRun(id)!;
  }

  getRun(id: string): CronRun | undefined {
    const row = this.#stmt.getRun.get(id);
    return row ? toRun(row) : undefined;
  }

  /** queued → running; false when the run is not queued (another process took it). */
  startRun(id: string, sessionKey: string, now: number): boolean {
    return this.#stmt.startRun.run({ id, sessionKey, now }).changes === 1;
  }

  /** Sets a final status; false when the run was already final. Keeps the job's last 50 runs. */
  finishRun(
    id: string,
    outcome: { status: FinalRunStatus; output?: string | undefined; error?: string | undefined },
    now: number,
  ): boolean {
    return this.transaction(() => {
      const done =
        this.#stmt.finishRun.run({
          id,
          status: outcome.status,
          output: outcome.output ?? null,
          error: outcome.error ?? null,
          now,
        }).changes === 1;
      const run = done ? this.getRun(id) : undefined;
      if (run) this.#stmt.pruneRuns.run(run.jobId, run.jobId, 50);
      return done;
    });
  }

  /** Queued and running runs, oldest first. */
  openRuns(): CronRun[] {
    return this.#stmt.openRuns.all().map(toRun);
  }

  /** A job's runs, newest first. */
  runs(jobId: string, limit = 10): CronRun[] {
    return this.#stmt.runs.all(jobId, limit).map(toRun);
  }

  /** Clears a job's failure streak (a run succeeded). */
  recordSuccess(jobId: string): void {
    this.#stmt.success.run(jobId);
  }

  /**
   * Counts a failed run: `skipTicksFor(failures)` ticks are skipped next. Returns the streak length and
   * whether this is the first failure of the streak not yet reported (report it now, once).
   */
  recordFailure(
    jobId: string,
    skipTicksFor: (failures: number) => number,
  ): { failures: number; report: boolean } {
    return this.transaction(() => {
      const job = this.getJob(jobId);
      if (!job) return { failures: 0, report: false };
      const failures = job.failures + 1;
      this.#stmt.failure.run({ id: jobId, failures, skipTicks: skipTicksFor(failures) });
      return { failures, report: !job.failureReported };
    });
  }

  /** Marks a target's unreachability reported (`on`) or cleared; returns whether it changed. */
  markTargetReported(jobId: string, target: string, on: boolean): boolean {
    return this.transaction(() => {
      const job = this.getJob(jobId);
      if (!job || job.reportedTargets.includes(target) === on) return false;
      const next = on ? [...job.reportedTargets, target] : job.reportedTargets.filter((t) => t !== target);
      this.#stmt.reported.run(JSON.stringify(next), jobId);
      return true;
    });
  }

  /** A counter that changes whenever a job is added, edited, paused or removed, or a run is queued. */
  version(): number {
    return this.#stmt.version.get()?.value ?? 0;
  }

  get isOpen(): boolean {
    return this.#db.open;
  }

  /** Closes the connection if the store opened it. Safe to call twice. */
  close(): void {
    if (this.#owned && this.#db.open) this.#db.close();
  }
}
