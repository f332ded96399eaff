/**
 * The in-process scheduler: one timer armed for the soonest tick. It keeps only what it was told
 * (`upsert`), so exactly-once is the tick handler's job (the cron service claims ticks in SQLite).
 */
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { nextOccurrence } from "./schedule.js";
import type { ScheduledJob, Scheduler, TickHandler } from "./types.js";

/** Options of {@link EmbeddedScheduler}. */
export interface EmbeddedSchedulerOptions {
  logger: Logger;
  /** @defaultValue Date.now */
  now?: () => number;
  /**
   * Longest single timer wait; the timer re-checks at least this often (clock changes, long waits
   * beyond setTimeout's range). @defaultValue 60_000
   */
  maxWaitMs?: number;
}

interface Entry {
  job: ScheduledJob;
  nextRunAt: number;
}

/** Ticks from a timer in this process. */
export class EmbeddedScheduler implements Scheduler {
  readonly #entries = new Map<string, Entry>();
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #maxWaitMs: number;
  #onTick: TickHandler | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** The tick pass in progress: passes never overlap. */
  #ticking: Promise<void> | undefined;

  constructor(options: EmbeddedSchedulerOptions) {
    this.#log = options.logger.child({ component: "embedded-scheduler" });
    this.#now = options.now ?? Date.now;
    this.#maxWaitMs = options.maxWaitMs ?? 60_000;
  }

  async start(onTick: TickHandler): Promise<void> {
    if (this.#onTick) return;
    this.#onTick = onTick;
    this.#arm();
  }

  async stop(): Promise<void> {
    this.#onTick = undefined;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#ticking;
  }

  async upsert(job: ScheduledJob): Promise<void> {
    if (job.paused || job.nextRunAt === undefined) this.#entries.delete(job.id);
    else this.#entries.set(job.id, { job, nextRunAt: job.nextRunAt });
    this.#arm();
  }

  async remove(jobId: string): Promise<void> {
    this.#entries.delete(jobId);
    this.#arm();
  }

  async list(): Promise<{ jobId: string; nextRunAt: number }[]> {
    return [...this.#entries.values()]
      .map((e) => ({ jobId: e.job.id, nextRunAt: e.nextRunAt }))
      .sort((a, b) => a.nextRunAt - b.nextRunAt);
  }

  /**
   * Delivers each tick due at `now` (one per job: after downtime the handler sees the first missed tick
   * and decides), then moves each job to its first occurrence after `now`.
   */
  async tick(now: number): Promise<void> {
    while (this.#ticking) await this.#ticking;
    this.#ticking = this.#deliver(now);
    try {
      await this.#ticking;
    } finally {
      this.#ticking = undefined;
      this.#arm();
    }
  }

  async #deliver(now: number): Promise<void> {
    if (!this.#onTick) return;
    const due = [...this.#entries.values()].filter((e) => e.nextRunAt <= now);
    for (const entry of due) {
      const tickAt = entry.nextRunAt;
      const next = nextOccurrence(entry.job.schedule, Math.max(tickAt, now));
      if (next === undefined) this.#entries.delete(entry.job.id);
      else entry.nextRunAt = next;
      try {
        await this.#onTick?.({ jobId: entry.job.id, tickAt }, now);
      } catch (err) {
        this.#log.error({ jobId: entry.job.id, tickAt, error: describeError(err) }, "tick handler failed");
      }
    }
  }

  #arm(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (!this.#onTick || this.#entries.size === 0) return;
    const soonest = Math.min(...[...this.#entries.values()].map((e) => e.nextRunAt));
    const waitMs = Math.min(this.#maxWaitMs, Math.max(0, soonest - this.#now()));
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.tick(this.#now());
    }, waitMs);
    this.#timer.unref?.();
  }
}
