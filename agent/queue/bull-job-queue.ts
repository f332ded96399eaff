import { DelayedError, type Job, Queue, QueueEvents, UnrecoverableError, Worker } from "bullmq";
import { Redis } from "ioredis";
import { describeError, HeraldError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type {
  JobHandler,
  JobQueue,
  QueueEvent,
  TurnJob,
  TurnProgress,
  TurnResult,
  WorkerAnnouncement,
} from "../../core/turn.js";
import { Announcements, encodeAnnouncement } from "./bull-announcements.js";
import { LentSlots } from "./bull-lent-slots.js";
import { fromBullId, QUEUE_NAME, RedisNames, toBullId } from "./bull-names.js";
import { type OrderingScripts, orderingScripts } from "./bull-scripts.js";

export { fromBullId, toBullId } from "./bull-names.js";

import {
  DEFAULT_ATTEMPTS,
  DEFAULT_BACKOFF_MS,
  DEFAULT_CONCURRENCY,
  DEFAULT_MAX_FINISHED,
  isRetryable,
  Listeners,
  LruMap,
} from "./shared.js";

/** Options of {@link BullJobQueue}. */
export interface BullJobQueueOptions {
  logger: Logger;
  /** `redis://` or `rediss://` URL. */
  connection: string;
  /** Prefix of every Redis key and channel. @defaultValue "herald" */
  prefix?: string;
  /** Tries per job for retryable failures, the first included. @defaultValue 3 */
  attempts?: number;
  /** Wait before the first retry; doubles each retry. @defaultValue 1000 */
  backoffMs?: number;
  /**
   * How long a running job's locks (BullMQ's and the orderingKey's) last without renewal: a worker
   * killed mid-job gives its job back after about this long. @defaultValue 20000
   */
  lockDurationMs?: number;
  /** How often BullMQ looks for jobs of dead workers. @defaultValue 15000 */
  stalledIntervalMs?: number;
  /**
   * How long a job whose key is busy first steps aside before it looks again; it doubles on each look,
   * up to half of `lockDurationMs`. @defaultValue 500
   */
  busyDelayMs?: number;
  /** Finished jobs kept in Redis (and so re-emitted on re-enqueue). @defaultValue 10000 */
  maxFinished?: number;
}

/** What a BullMQ job of this queue carries. */
interface BullJobData {
  id: string;
  orderingKey: string;
  job: TurnJob;
}

/** How a job that ended in failure is described, kept in its BullMQ hash. */
interface FailureRecord {
  error: string;
  retryable: boolean;
}

interface Running {
  controller: AbortController;
  /** Why the signal fired: cancel() somewhere, or this consumer closing. */
  stop: "cancel" | "shutdown" | undefined;
}

const CANCELLED_REASON = "herald: turn cancelled";
/** BullMQ's failure of a job whose worker died (its lock expired) more than `maxStalledCount` times. */
const STALLED_TOO_OFTEN = "job stalled more than allowable limit";
const FAILURE_FIELD = "heraldFailure";
const CANCEL_MARKER_TTL_MS = 24 * 60 * 60 * 1_000;

/**
 * The Redis queue: turns go through the BullMQ queue `turns`; any number of processes consume it.
 *
 * Per-orderingKey exclusivity (BullMQ open source has no groups): each orderingKey has a Redis list of
 * job ids in enqueue order and a lock. A worker runs a job only when it heads its key's list and takes
 * the key lock (SET NX PX, renewed while it runs); otherwise the job steps aside into BullMQ's delayed
 * set for `busyDelayMs`. When a job finishes, its worker removes it from the list and promotes the next
 * head at once, so the delay is a fallback, not the hand-over. Cancellation is a Redis pub/sub message
 * every consumer hears, plus a marker a worker checks before it starts a job. A job waiting in
 * `ctx.idle` lends its slot (`LentSlots`): the worker takes one more job while it waits. The gateway's
 * announcements to workers (a session's end, a reload) are JSON messages on one more channel.
 */
export class BullJobQueue implements JobQueue {
  readonly #logger: Logger;
  readonly #prefix: string;
  readonly #names: RedisNames;
  readonly #attempts: number;
  readonly #backoffMs: number;
  readonly #lockDurationMs: number;
  readonly #stalledIntervalMs: number;
  readonly #busyDelayMs: number;
  readonly #maxFinished: number;
  readonly #client: Redis;
  readonly #scripts: OrderingScripts;
  readonly #queue: Queue<BullJobData, TurnResult>;
  readonly #listeners: Listeners;
  /** Worker side: what the gateway announces (a session's end, a reload). */
  readonly #announcements: Announcements;
  #announcementsSubscribed = false;
  /** Ids this instance cancelled: their events are dropped even if a worker finished them. */
  readonly #cancelled: LruMap<true>;
  readonly #running = new Map<string, Running>();
  #subscriber: Redis | undefined;
  #events: Promise<QueueEvents> | undefined;
  #eventsConnection: Redis | undefined;
  #worker: Worker<BullJobData, TurnResult> | undefined;
  #handler: JobHandler | undefined;
  readonly #lentSlots: LentSlots;
  #closing: Promise<void> | undefined;

  constructor(options: BullJobQueueOptions) {
    this.#logger = options.logger.child({ component: "bull-job-queue" });
    this.#prefix = options.prefix ?? "herald";
    this.#names = new RedisNames(this.#prefix);
    this.#attempts = Math.max(1, options.attempts ?? DEFAULT_ATTEMPTS);
    this.#backoffMs = options.backoffMs ?? DEFAULT_BACKOFF_MS;
    this.#lockDurationMs = options.lockDurationMs ?? 20_000;
    this.#stalledIntervalMs = options.stalledIntervalMs ?? 15_000;
    this.#busyDelayMs = options.busyDelayMs ?? 500;
    this.#maxFinished = options.maxFinished ?? DEFAULT_MAX_FINISHED;
    this.#client = new Redis(options.connection, { maxRetriesPerRequest: null });
    this.#client.on("error", (err) =>
      this.#logger.warn({ err: describeError(err) }, "redis connection error"),
    );
    this.#scripts = orderingScripts(this.#client);
    this.#queue = new Queue(QUEUE_NAME, { connection: this.#client, prefix: this.#prefix });
    this.#queue.on("error", (err) => this.#logger.warn({ err: describeError(err) }, "bullmq queue error"));
    this.#listeners = new Listeners(this.#logger);
    this.#cancelled = new LruMap(this.#maxFinished);
    this.#lentSlots = new LentSlots(this.#logger);
    this.#announcements = new Announcements(this.#logger);
  }

  async enqueue(job: TurnJob, options: { id: string; orderingKey: string }): Promise<void> {
    this.#assertOpen();
    const { id, orderingKey } = options;
    const bullId = toBullId(id);
    // Every enqueue awaits the same promise, so reservations reach Redis in call order.
    if (this.#events) await this.#events;
    const q = this.#queue;
    const state = await this.#scripts.reserve(
      [
        q.toKey(bullId),
        this.#names.order(orderingKey),
        this.#names.cancelled(bullId),
        q.keys.completed!,
        q.keys.failed!,
      ],
      bullId,
    );
    if (state === 1) {
      // A fresh job under an id cancelled before: its events count again.
      this.#cancelled.delete(id);
      await q.add(QUEUE_NAME, { id, orderingKey, job } satisfies BullJobData, {
        jobId: bullId,
        attempts: this.#attempts,
        backoff: { type: "exponential", delay: this.#backoffMs },
        removeOnComplete: { count: this.#maxFinished },
        removeOnFail: { count: this.#maxFinished },
      });
    } else if (state === 2 || state === 3) {
      const finished = await this.#finishedEvent(id, bullId, state === 2 ? "completed" : "failed");
      if (finished) this.#listeners.emit(finished);
    }
  }

  async consume(handler: JobHandler, options: { concurrency?: number } = {}): Promise<void> {
    this.#assertOpen();
    if (this.#handler) {
      throw new HeraldError("This queue is already consuming; call consume() once per queue", {
        code: "invalid_input",
      });
    }
    this.#handler = handler;
    const concurrency = Math.max(1, options.concurrency ?? DEFAULT_CONCURRENCY);
    const subscriber = this.#ensureSubscriber();
    await subscriber.subscribe(this.#names.channel("cancel"));
    const worker = new Worker<BullJobData, TurnResult>(
      QUEUE_NAME,
      (job, token) => this.#process(job, token),
      {
        connection: this.#client,
        prefix: this.#prefix,
        concurrency,
        lockDuration: this.#lockDurationMs,
        stalledInterval: this.#stalledIntervalMs,
        // A job whose worker died runs once more; a second death fails it (STALLED_TOO_OFTEN): a turn
        // that kills its worker must not take down every worker in turn.
        maxStalledCount: 1,
        autorun: false,
      },
    );
    worker.on("error", (err) => this.#logger.warn({ err: describeError(err) }, "bullmq worker error"));
    // These fire after BullMQ recorded the outcome; a failure with tries left has no finishedOn.
    worker.on("completed", (job) => void this.#afterFinish(job, "remove"));
    worker.on("failed", (job, err) => {
      if (!job) return;
      if (err.message === CANCELLED_REASON) void this.#removeCancelled(job);
      else if (job.finishedOn) void this.#afterFinish(job, "remove");
    });
    this.#worker = worker;
    this.#lentSlots.attach(worker, concurrency);
    void worker
      .run()
      .catch((err: unknown) => this.#logger.error({ err: describeError(err) }, "worker stopped"));
    await worker.waitUntilReady();
  }

  subscribe(listener: (event: QueueEvent) => void): () => void {
    const unsubscribe = this.#listeners.add(listener);
    if (!this.#events && !this.#closing) {
      this.#events = this.#startEvents();
      this.#events.catch((err: unknown) =>
        this.#logger.error({ err: describeError(err) }, "could not listen to queue events"),
      );
    }
    return unsubscribe;
  }

  async cancel(jobId: string): Promise<void> {
    this.#assertOpen();
    const bullId = toBullId(jobId);
    this.#cancelled.set(jobId, true);
    // Marker first, then the message: a worker registers a job before it checks the marker, so it
    // either sees the marker or gets the message.
    await this.#client.set(this.#names.cancelled(bullId), "1", "PX", CANCEL_MARKER_TTL_MS);
    await this.#client.publish(this.#names.channel("cancel"), bullId);
    const job = await this.#queue.getJob(bullId);
    if (!job) return;
    // A running job is locked and stays: its worker aborts it and removes it.
    const removed = await this.#queue.remove(bullId).catch(() => 0);
    if (removed === 1) await this.#release(job.data.orderingKey, bullId, "", "remove");
  }

  /** Publishes on the announcements channel; PUBLISH answers how many subscribers (workers) got it. */
  async announce(event: WorkerAnnouncement): Promise<number> {
    this.#assertOpen();
    return this.#client.publish(this.#names.channel("announcements"), encodeAnnouncement(event));
  }

  onAnnouncement(listener: (event: WorkerAnnouncement) => void): () => void {
    const unsubscribe = this.#announcements.add(listener);
    if (!this.#announcementsSubscribed && !this.#closing) {
      this.#announcementsSubscribed = true;
      // One connection carries every subscription, in order: a worker that asks before consume()
      // hears announcements by the time it counts as a worker.
      void this.#ensureSubscriber()
        .subscribe(this.#names.channel("announcements"))
        .catch((err: unknown) =>
          this.#logger.warn({ err: describeError(err) }, "could not listen for announcements"),
        );
    }
    return unsubscribe;
  }

  async stats(): Promise<{ waiting: number; active: number; workers: number }> {
    const counts = await this.#queue.getJobCounts("wait", "delayed", "prioritized", "active");
    const waiting = (counts.wait ?? 0) + (counts.delayed ?? 0) + (counts.prioritized ?? 0);
    const workers = await this.#queue.getWorkersCount();
    return { waiting, active: counts.active ?? 0, workers };
  }

  /**
   * Stops consuming and listening. Running jobs are aborted and handed back to the queue (they run
   * again, here after a restart or on another worker); nothing is emitted for them.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#lentSlots.detach();
    for (const bullId of this.#running.keys()) this.#stopRun(bullId, "shutdown");
    const results = await Promise.allSettled([
      this.#worker?.close(),
      this.#events?.then((events) => events.close()),
    ]);
    for (const r of results) {
      if (r.status === "rejected") this.#logger.warn({ err: describeError(r.reason) }, "close failed");
    }
    await this.#queue.close().catch(() => undefined);
    this.#listeners.clear();
    this.#subscriber?.disconnect();
    this.#eventsConnection?.disconnect();
    this.#client.disconnect();
  }

  #assertOpen(): void {
    if (this.#closing) {
      throw new HeraldError("The job queue is closed; create a new one", { code: "invalid_input" });
    }
  }

  async #process(job: Job<BullJobData, TurnResult>, token: string | undefined): Promise<TurnResult> {
    const bullId = job.id!;
    const lockToken = token ?? `${bullId}:${Date.now()}`;
    const { id, orderingKey } = job.data;
    const run: Running = { controller: new AbortController(), stop: undefined };
    // Registered before the marker check: see cancel().
    this.#running.set(bullId, run);
    if (this.#closing) run.stop = "shutdown";
    try {
      const acquired = await this.#scripts.acquire(
        this.#orderKeys(orderingKey, bullId),
        bullId,
        lockToken,
        this.#lockDurationMs,
      );
      if (acquired === -2 || run.stop === "cancel") throw new UnrecoverableError(CANCELLED_REASON);
      if (acquired !== 1 || run.stop === "shutdown") {
        if (acquired === 1) await this.#release(orderingKey, bullId, lockToken, "keep");
        return await this.#stepAside(job, lockToken, orderingKey, acquired === 1 ? 0 : this.#busyDelay(job));
      }
      return await this.#runHandler(job, lockToken, run);
    } finally {
      this.#running.delete(bullId);
      this.#logger.debug({ jobId: id }, "turn left the worker");
    }
  }

  async #runHandler(job: Job<BullJobData, TurnResult>, lockToken: string, run: Running): Promise<TurnResult> {
    const bullId = job.id!;
    const { id, orderingKey } = job.data;
    const renewKeys: [string, string] = [this.#names.lock(orderingKey), this.#names.cancelled(bullId)];
    const renewal = setInterval(() => {
      this.#scripts.renew(renewKeys, lockToken, this.#lockDurationMs).then(
        (held) => {
          if (held === 0) this.#logger.warn({ jobId: id }, "lost the ordering lock of a running turn");
          // A cancel message lost while the subscriber reconnected still stops the job here.
          if (held === -1) this.#stopRun(bullId, "cancel");
        },
        (err: unknown) => {
          this.#logger.warn({ jobId: id, err: describeError(err) }, "could not renew the ordering lock");
        },
      );
    }, this.#lockDurationMs / 2);
    renewal.unref();
    const progress = (event: TurnProgress) => {
      if (run.stop) return;
      this.#client
        .publish(this.#names.channel("progress"), JSON.stringify({ jobId: id, progress: event }))
        .catch(() => {
          // Progress is best effort: a lost line must not fail the turn.
        });
    };
    const lending = this.#lentSlots.forJob();
    let outcome: { ok: true; result: TurnResult } | { ok: false; err: unknown };
    try {
      outcome = {
        ok: true,
        result: await this.#handler!(job.data.job, {
          signal: run.controller.signal,
          progress,
          idle: lending.idle,
        }),
      };
    } catch (err) {
      outcome = { ok: false, err };
    }
    lending.end();
    try {
      // A stop decides the outcome even when the handler finished anyway: a cancelled turn emits
      // nothing, and a turn cut short by shutdown runs again elsewhere.
      if (run.stop === "cancel") throw new UnrecoverableError(CANCELLED_REASON);
      if (run.stop === "shutdown") {
        clearInterval(renewal);
        await this.#release(orderingKey, bullId, lockToken, "keep");
        return await this.#stepAside(job, lockToken, orderingKey, 0);
      }
      if (outcome.ok) return outcome.result;
      const retryable = isRetryable(outcome.err);
      const error = describeError(outcome.err);
      const willRetry = retryable && job.attemptsMade + 1 < this.#attempts;
      this.#logger.warn({ jobId: id, attempt: job.attemptsMade + 1, willRetry, err: error }, "turn failed");
      if (willRetry) throw outcome.err;
      await this.#client.hset(
        this.#queue.toKey(bullId),
        FAILURE_FIELD,
        JSON.stringify({ error, retryable } satisfies FailureRecord),
      );
      throw new UnrecoverableError(error);
    } finally {
      clearInterval(renewal);
      // The job stays at its key's head until BullMQ has finished it (see #afterFinish), so dropping
      // the lock here lets only a retry of this very job in.
      await this.#release(orderingKey, bullId, lockToken, "keep");
    }
  }

  /**
   * How long a job whose key is busy steps aside: growing with each try, since the job that holds the
   * key promotes the next one when it finishes and this delay only covers a promotion lost with a
   * crashed worker.
   */
  #busyDelay(job: Job<BullJobData, TurnResult>): number {
    const ceilingMs = Math.max(this.#busyDelayMs, this.#lockDurationMs / 2);
    return Math.min(this.#busyDelayMs * 2 ** Math.min(Math.max(job.attemptsStarted - 1, 0), 16), ceilingMs);
  }

  /** Moves a job that may not run now back to delayed; `DelayedError` tells BullMQ it moved. */
  async #stepAside(
    job: Job<BullJobData, TurnResult>,
    lockToken: string,
    orderingKey: string,
    delayMs: number,
  ): Promise<never> {
    const bullId = job.id!;
    await job.moveToDelayed(Date.now() + delayMs, lockToken);
    // The key may have been released between the acquire and the move, when this job could not be
    // promoted yet: look once more.
    const [list, lock, completed, failed] = this.#orderKeys(orderingKey, bullId);
    if (delayMs > 0 && (await this.#scripts.mayRun([list, lock, completed, failed], bullId)) === 1) {
      await job.promote().catch(() => undefined);
    }
    throw new DelayedError();
  }

  /** After BullMQ finished a job: take it off its key's list and start the next job of the key. */
  async #afterFinish(job: Job<BullJobData, TurnResult>, mode: "if-finished" | "remove"): Promise<void> {
    try {
      await this.#release(job.data.orderingKey, job.id!, "", mode);
    } catch (err) {
      // A lost release only delays the key: the next job's acquire drops finished heads.
      this.#logger.warn(
        { jobId: job.data.id, err: describeError(err) },
        "could not release the ordering key",
      );
    }
  }

  async #removeCancelled(job: Job<BullJobData, TurnResult>): Promise<void> {
    await job.remove().catch(() => undefined);
    await this.#afterFinish(job, "remove");
  }

  /** Releases a job's hold on its key and promotes the new head if it waits in delayed. */
  async #release(
    orderingKey: string,
    bullId: string,
    lockToken: string,
    mode: "keep" | "remove" | "if-finished",
  ) {
    const keys = this.#orderKeys(orderingKey, bullId);
    const head = await this.#scripts.release([keys[0], keys[1], keys[2], keys[3]], bullId, lockToken, mode);
    if (mode === "keep" || !head || head === bullId) return;
    const next = await this.#queue.getJob(head);
    if (next && (await next.isDelayed())) await next.promote().catch(() => undefined);
  }

  async #startEvents(): Promise<QueueEvents> {
    const subscriber = this.#ensureSubscriber();
    await subscriber.subscribe(this.#names.channel("progress"));
    // Start reading right after the newest event now in the stream: events of jobs enqueued from
    // here on are never missed, even before the first blocking read runs.
    const last = await this.#client.xrevrange(this.#queue.keys.events!, "+", "-", "COUNT", 1);
    this.#eventsConnection = this.#client.duplicate();
    const events = new QueueEvents(QUEUE_NAME, {
      connection: this.#eventsConnection,
      prefix: this.#prefix,
      lastEventId: last[0]?.[0] ?? "0-0",
    });
    events.on("error", (err) => this.#logger.warn({ err: describeError(err) }, "bullmq events error"));
    events.on("completed", ({ jobId, returnvalue }) => {
      const id = fromBullId(jobId);
      if (id === undefined || this.#cancelled.has(id)) return;
      this.#listeners.emit({ type: "completed", jobId: id, result: returnvalue as unknown as TurnResult });
    });
    events.on("failed", ({ jobId, failedReason }) => {
      const id = fromBullId(jobId);
      if (id === undefined || this.#cancelled.has(id) || failedReason === CANCELLED_REASON) return;
      void this.#finishedEvent(id, jobId, "failed", failedReason).then((event) => {
        if (event && !this.#cancelled.has(id)) this.#listeners.emit(event);
      });
    });
    await events.waitUntilReady();
    return events;
  }

  /** The event a finished job is re-emitted as, read back from Redis. */
  async #finishedEvent(
    id: string,
    bullId: string,
    type: "completed" | "failed",
    failedReason?: string,
  ): Promise<QueueEvent | undefined> {
    try {
      if (type === "completed") {
        const job = await this.#queue.getJob(bullId);
        return job ? { type, jobId: id, result: job.returnvalue } : undefined;
      }
      const raw = await this.#client.hget(this.#queue.toKey(bullId), FAILURE_FIELD);
      if (raw) return { type, jobId: id, ...(JSON.parse(raw) as FailureRecord) };
      const job = failedReason === undefined ? await this.#queue.getJob(bullId) : undefined;
      const reason = failedReason ?? job?.failedReason ?? "unknown failure";
      if (reason === CANCELLED_REASON) return undefined;
      if (reason === STALLED_TOO_OFTEN) {
        this.#logger.error({ jobId: id }, "a turn's worker died during it twice; failed, not run again");
        const error = "the worker running this turn ended during it twice (killed, crashed or stalled)";
        return { type, jobId: id, error, retryable: false, code: "turn_crashed" };
      }
      // Failed without our record: BullMQ gave up on it for another reason: worth a retry.
      return { type, jobId: id, error: reason, retryable: true };
    } catch (err) {
      this.#logger.error({ jobId: id, err: describeError(err) }, "could not read a finished job");
      return undefined;
    }
  }

  #ensureSubscriber(): Redis {
    if (!this.#subscriber) {
      const subscriber = this.#client.duplicate();
      subscriber.on("error", (err) =>
        this.#logger.warn({ err: describeError(err) }, "redis subscriber error"),
      );
      subscriber.on("message", (channel: string, message: string) => this.#onMessage(channel, message));
      this.#subscriber = subscriber;
    }
    return this.#subscriber;
  }

  #onMessage(channel: string, message: string): void {
    if (channel === this.#names.channel("announcements")) {
      this.#announcements.receive(message);
      return;
    }
    if (channel === this.#names.channel("cancel")) {
      this.#stopRun(message, "cancel");
      return;
    }
    if (channel === this.#names.channel("progress")) {
      try {
        const { jobId, progress } = JSON.parse(message) as { jobId: string; progress: TurnProgress };
        if (!this.#cancelled.has(jobId)) this.#listeners.emit({ type: "progress", jobId, progress });
      } catch (err) {
        this.#logger.warn({ err: describeError(err) }, "unreadable progress message");
      }
    }
  }

  #stopRun(bullId: string, why: "cancel" | "shutdown"): void {
    const run = this.#running.get(bullId);
    if (!run || run.stop) return;
    run.stop = why;
    run.controller.abort(
      why === "cancel"
        ? new HeraldError("The turn was cancelled", { code: "turn_cancelled" })
        : new HeraldError("The job queue is closing", { code: "turn_cancelled" }),
    );
  }

  #orderKeys(orderingKey: string, bullId: string): [string, string, string, string, string] {
    const q = this.#queue;
    return [
      this.#names.order(orderingKey),
      this.#names.lock(orderingKey),
      q.keys.completed!,
      q.keys.failed!,
      this.#names.cancelled(bullId),
    ];
  }
}

/** Builds the Redis queue. */
export function createBullJobQueue(options: BullJobQueueOptions): BullJobQueue {
  return new BullJobQueue(options);
}
