/**
 * The Redis scheduler: each cron job is a BullMQ job scheduler (`upsertJobScheduler`) on the queue
 * `cron`; each one-shot a delayed job with a deterministic id. BullMQ hands each tick to exactly one
 * worker of any number of processes, and keeps at most one pending tick per job, so downtime never
 * leaves a burst behind. Cron expressions are stepped by croner (the same math as the embedded timer).
 */
import { type Job, Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { nextOccurrence } from "./schedule.js";
import type { ScheduledJob, Scheduler, TickHandler } from "./types.js";

/** Options of {@link BullScheduler}. */
export interface BullSchedulerOptions {
  logger: Logger;
  /** `redis://` or `rediss://` URL. */
  connection: string;
  /** Prefix of every Redis key. @defaultValue "herald" */
  prefix?: string;
  /** Ticks handled at once by this process. @defaultValue 4 */
  concurrency?: number;
}

/** What a tick job carries. One-shots carry their time; scheduler jobs have it in their id. */
interface TickData {
  jobId: string;
  tickAt?: number;
}

const QUEUE_NAME = "cron";
const KEEP = { age: 7 * 24 * 3600, count: 1000 };

/** BullMQ's repeat strategy, with croner instead of cron-parser: same DST handling as the timer. */
function croneStrategy(millis: number, opts: { pattern?: string; tz?: string }): number | undefined {
  if (!opts.pattern) return undefined;
  return nextOccurrence({ kind: "cron", expr: opts.pattern, timezone: opts.tz ?? "UTC" }, millis);
}

/** `repeat:<schedulerId>:<millis>` → millis. */
function tickOfSchedulerJob(bullId: string | undefined): number | undefined {
  const millis = Number(bullId?.slice(bullId.lastIndexOf(":") + 1));
  return Number.isFinite(millis) ? millis : undefined;
}

/** Ticks from BullMQ job schedulers on Redis. */
export class BullScheduler implements Scheduler {
  readonly #log: Logger;
  readonly #prefix: string;
  readonly #concurrency: number;
  readonly #client: Redis;
  readonly #queue: Queue<TickData>;
  #worker: Worker<TickData> | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: BullSchedulerOptions) {
    this.#log = options.logger.child({ component: "bull-scheduler" });
    this.#prefix = options.prefix ?? "herald";
    this.#concurrency = Math.max(1, options.concurrency ?? 4);
    this.#client = new Redis(options.connection, { maxRetriesPerRequest: null });
    this.#client.on("error", (err) =>
      this.#log.warn({ error: describeError(err) }, "redis connection error"),
    );
    this.#queue = new Queue<TickData>(QUEUE_NAME, {
      connection: this.#client,
      prefix: this.#prefix,
      settings: { repeatStrategy: croneStrategy },
    });
    this.#queue.on("error", (err) => this.#log.warn({ error: describeError(err) }, "bullmq queue error"));
  }

  async start(onTick: TickHandler): Promise<void> {
    if (this.#worker || this.#closing) return;
    const worker = new Worker<TickData>(QUEUE_NAME, (job) => this.#process(job, onTick), {
      connection: this.#client,
      prefix: this.#prefix,
      concurrency: this.#concurrency,
      settings: { repeatStrategy: croneStrategy },
      autorun: false,
    });
    worker.on("error", (err) => this.#log.warn({ error: describeError(err) }, "bullmq worker error"));
    this.#worker = worker;
    void worker
      .run()
      .catch((err: unknown) => this.#log.error({ error: describeError(err) }, "worker stopped"));
    await worker.waitUntilReady();
  }

  async upsert(job: ScheduledJob): Promise<void> {
    const { id, schedule } = job;
    if (job.paused || job.nextRunAt === undefined) return this.remove(id);
    const template = {
      name: "tick",
      data: { jobId: id } satisfies TickData,
      opts: { attempts: 1, removeOnComplete: KEEP, removeOnFail: KEEP },
    };
    switch (schedule.kind) {
      case "cron":
        await this.#removeOneShots(id);
        await this.#queue.upsertJobScheduler(id, { pattern: schedule.expr, tz: schedule.timezone }, template);
        return;
      case "every":
        await this.#removeOneShots(id);
        // The first tick at the job's own next tick, then every `everyMs`: the same grid as the timer.
        await this.#queue.upsertJobScheduler(
          id,
          { every: schedule.everyMs, startDate: job.nextRunAt },
          template,
        );
        return;
      case "once": {
        await this.#queue.removeJobScheduler(id);
        const bullId = `once-${id}-${job.nextRunAt}`;
        await this.#removeOneShots(id, bullId);
        // A deterministic id: adding it again (restart, a second process) is a no-op while it is kept.
        await this.#queue.add(
          "once",
          { jobId: id, tickAt: job.nextRunAt },
          {
            jobId: bullId,
            delay: Math.max(0, job.nextRunAt - Date.now()),
            attempts: 1,
            removeOnComplete: KEEP,
            removeOnFail: KEEP,
          },
        );
        return;
      }
    }
  }

  async remove(jobId: string): Promise<void> {
    await this.#queue.removeJobScheduler(jobId);
    await this.#removeOneShots(jobId);
  }

  async list(): Promise<{ jobId: string; nextRunAt: number }[]> {
    const schedulers = await this.#queue.getJobSchedulers();
    const out = schedulers
      .filter((s) => typeof s.next === "number")
      .map((s) => ({ jobId: s.key, nextRunAt: s.next as number }));
    for (const job of await this.#queue.getJobs(["delayed", "wait"])) {
      if (job?.name === "once" && job.data.tickAt !== undefined)
        out.push({ jobId: job.data.jobId, nextRunAt: job.data.tickAt });
    }
    return out.sort((a, b) => a.nextRunAt - b.nextRunAt);
  }

  stop(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    await this.#worker
      ?.close()
      .catch((err: unknown) => this.#log.warn({ error: describeError(err) }, "close failed"));
    await this.#queue.close().catch(() => undefined);
    this.#client.disconnect();
  }

  async #process(job: Job<TickData>, onTick: TickHandler): Promise<void> {
    const tickAt = job.data.tickAt ?? tickOfSchedulerJob(job.id);
    if (tickAt === undefined) {
      this.#log.warn({ bullId: job.id }, "tick without a time skipped");
      return;
    }
    try {
      await onTick({ jobId: job.data.jobId, tickAt }, Date.now());
    } catch (err) {
      this.#log.error({ jobId: job.data.jobId, tickAt, error: describeError(err) }, "tick handler failed");
    }
  }

  /** Removes a job's pending one-shot ticks, except `keep`. */
  async #removeOneShots(jobId: string, keep?: string): Promise<void> {
    for (const job of await this.#queue.getJobs(["delayed", "wait"])) {
      if (job?.name === "once" && job.data.jobId === jobId && job.id !== keep)
        await job.remove().catch(() => undefined);
    }
  }
}
