import { describeError, HeraldError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { JobHandler, JobQueue, QueueEvent, TurnJob, TurnProgress, TurnResult } from "../../core/turn.js";
import {
  DEFAULT_ATTEMPTS,
  DEFAULT_BACKOFF_MS,
  DEFAULT_CONCURRENCY,
  Fifo,
  isRetryable,
  Listeners,
  LruMap,
} from "./shared.js";

/** Options of {@link EmbeddedJobQueue}. */
export interface EmbeddedJobQueueOptions {
  logger: Logger;
  /** Tries per job for retryable failures, the first included. @defaultValue 3 */
  attempts?: number;
  /** Wait before the first retry; doubles each retry. @defaultValue 1000 */
  backoffMs?: number;
  /** Finished jobs remembered, with their results, for a re-enqueue by id. @defaultValue 64 */
  maxFinished?: number;
}

/**
 * The embedded queue lives and dies with the gateway, so what it remembers only answers a re-enqueue
 * within one process (a restart starts empty and reruns from the turn journal). Each entry holds a whole
 * turn result; ten thousand of them were megabytes of heap, all of it promoted and collected again.
 */
const EMBEDDED_MAX_FINISHED = 64;

interface Entry {
  id: string;
  lane: Lane;
  job: TurnJob;
  /** Tries made so far. */
  attempts: number;
  state: "waiting" | "running" | "backoff";
  controller: AbortController | undefined;
  retryTimer: NodeJS.Timeout | undefined;
  /** Set by cancel() and close(): nothing of this job is emitted any more. */
  dropped: boolean;
  /** The running attempt's slot is lent (`idle`): settling does not give it back a second time. */
  lent?: boolean;
}

/** One orderingKey: its waiting jobs in order and whether one of them holds the key. */
interface Lane {
  key: string;
  fifo: Fifo<Entry>;
  /** A job of this key runs or waits for its retry; the others wait behind it. */
  held: Entry | undefined;
  inReady: boolean;
}

/**
 * The in-process queue of the embedded default: one FIFO per orderingKey, a FIFO of keys that have a
 * runnable head, and a global cap on jobs in flight. Dispatch is O(1) and uses no timers; timers only
 * wait out retry backoff.
 *
 * Finished outcomes (completed and failed) are remembered in a bounded LRU so a re-enqueue of a
 * finished id re-emits its outcome instead of running the job again. A cancelled id is forgotten: it
 * may be enqueued again as a new job.
 */
export class EmbeddedJobQueue implements JobQueue {
  readonly #logger: Logger;
  readonly #attempts: number;
  readonly #backoffMs: number;
  readonly #listeners: Listeners;
  readonly #finished: LruMap<QueueEvent>;
  /** Jobs waiting, running or waiting for a retry, by id. */
  readonly #jobs = new Map<string, Entry>();
  readonly #lanes = new Map<string, Lane>();
  /** Lanes whose head may run now, in the order they became runnable. */
  readonly #ready = new Fifo<Lane>();
  readonly #settling = new Set<Promise<void>>();
  #handler: JobHandler | undefined;
  #concurrency = DEFAULT_CONCURRENCY;
  #waiting = 0;
  #active = 0;
  #closing: Promise<void> | undefined;

  constructor(options: EmbeddedJobQueueOptions) {
    this.#logger = options.logger.child({ component: "embedded-job-queue" });
    this.#attempts = Math.max(1, options.attempts ?? DEFAULT_ATTEMPTS);
    this.#backoffMs = options.backoffMs ?? DEFAULT_BACKOFF_MS;
    this.#listeners = new Listeners(this.#logger);
    this.#finished = new LruMap(options.maxFinished ?? EMBEDDED_MAX_FINISHED);
  }

  async enqueue(job: TurnJob, options: { id: string; orderingKey: string }): Promise<void> {
    this.#assertOpen();
    const { id, orderingKey } = options;
    const finished = this.#finished.get(id);
    if (finished) {
      this.#listeners.emit(finished);
      return;
    }
    if (this.#jobs.has(id)) return;

    let lane = this.#lanes.get(orderingKey);
    if (!lane) {
      lane = { key: orderingKey, fifo: new Fifo(), held: undefined, inReady: false };
      this.#lanes.set(orderingKey, lane);
    }
    const entry: Entry = {
      id,
      lane,
      job,
      attempts: 0,
      state: "waiting",
      controller: undefined,
      retryTimer: undefined,
      dropped: false,
    };
    this.#jobs.set(id, entry);
    lane.fifo.push(entry);
    this.#waiting++;
    this.#markReady(lane);
    this.#pump();
  }

  async consume(handler: JobHandler, options: { concurrency?: number } = {}): Promise<void> {
    this.#assertOpen();
    if (this.#handler) {
      throw new HeraldError("This queue is already consuming; call consume() once per queue", {
        code: "invalid_input",
      });
    }
    this.#handler = handler;
    this.#concurrency = Math.max(1, options.concurrency ?? DEFAULT_CONCURRENCY);
    this.#pump();
  }

  subscribe(listener: (event: QueueEvent) => void): () => void {
    return this.#listeners.add(listener);
  }

  async cancel(jobId: string): Promise<void> {
    const entry = this.#jobs.get(jobId);
    if (!entry) return;
    this.#jobs.delete(jobId);
    entry.dropped = true;
    switch (entry.state) {
      case "waiting":
        // Left in its lane's FIFO and skipped at dispatch: removal stays O(1).
        this.#waiting--;
        break;
      case "backoff":
        clearTimeout(entry.retryTimer);
        this.#waiting--;
        this.#release(entry.lane);
        this.#pump();
        break;
      case "running":
        // The lane stays held until the handler settles, so a handler slow to honour the signal never
        // overlaps the next job of its key.
        entry.controller?.abort(new HeraldError("The turn was cancelled", { code: "turn_cancelled" }));
        break;
    }
  }

  async stats(): Promise<{ waiting: number; active: number; workers: number }> {
    return { waiting: this.#waiting, active: this.#active, workers: this.#handler && !this.#closing ? 1 : 0 };
  }

  /** Stops dispatching, aborts running jobs (emitting nothing for them) and waits until they settle. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    for (const entry of this.#jobs.values()) {
      entry.dropped = true;
      clearTimeout(entry.retryTimer);
      entry.controller?.abort(new HeraldError("The job queue is closing", { code: "turn_cancelled" }));
    }
    this.#jobs.clear();
    await Promise.allSettled([...this.#settling]);
    this.#lanes.clear();
    this.#listeners.clear();
    this.#waiting = 0;
    this.#handler = undefined;
  }

  #assertOpen(): void {
    if (this.#closing) {
      throw new HeraldError("The job queue is closed; create a new one", { code: "invalid_input" });
    }
  }

  #markReady(lane: Lane): void {
    if (!lane.held && !lane.inReady && lane.fifo.length > 0) {
      lane.inReady = true;
      this.#ready.push(lane);
    }
  }

  /** Starts runnable heads while slots are free. */
  #pump(): void {
    const handler = this.#handler;
    if (!handler || this.#closing) return;
    while (this.#active < this.#concurrency) {
      const lane = this.#ready.shift();
      if (!lane) return;
      lane.inReady = false;
      let entry = lane.fifo.shift();
      while (entry?.dropped) entry = lane.fifo.shift();
      if (!entry) {
        if (!lane.held) this.#lanes.delete(lane.key);
        continue;
      }
      this.#start(entry, handler);
    }
  }

  #start(entry: Entry, handler: JobHandler): void {
    const controller = new AbortController();
    entry.lane.held = entry;
    entry.state = "running";
    entry.controller = controller;
    entry.attempts++;
    this.#waiting--;
    this.#active++;
    const progress = (event: TurnProgress) => {
      if (entry.dropped || entry.controller !== controller) return;
      this.#listeners.emit({ type: "progress", jobId: entry.id, progress: event });
    };
    // While the job only waits (for its delegate_task children) its slot runs other jobs; it takes
    // the slot back when the wait ends, even past the cap for a moment.
    entry.lent = false;
    let waits = 0;
    const idle = async <T>(work: Promise<T>): Promise<T> => {
      waits++;
      if (waits === 1 && entry.controller === controller) {
        entry.lent = true;
        this.#active--;
        this.#pump();
      }
      try {
        return await work;
      } finally {
        waits--;
        // Taken back only by the attempt still running (a wait that outlived it gives nothing back).
        if (waits === 0 && entry.lent && entry.controller === controller) {
          entry.lent = false;
          this.#active++;
        }
      }
    };
    // The handler starts on a microtask: its synchronous throw becomes a rejection, and a listener that
    // enqueues from inside an event never re-enters dispatch.
    const settled = Promise.resolve()
      .then(() => handler(entry.job, { signal: controller.signal, progress, idle }))
      .then(
        (result) => this.#settle(entry, { ok: true, result }),
        (error: unknown) => this.#settle(entry, { ok: false, error }),
      );
    this.#settling.add(settled);
    void settled.finally(() => this.#settling.delete(settled));
  }

  #settle(entry: Entry, outcome: { ok: true; result: TurnResult } | { ok: false; error: unknown }): void {
    if (entry.lent) entry.lent = false;
    else this.#active--;
    entry.controller = undefined;
    if (entry.dropped) {
      this.#release(entry.lane);
      this.#pump();
      return;
    }
    if (!outcome.ok && isRetryable(outcome.error) && entry.attempts < this.#attempts) {
      const delayMs = this.#backoffMs * 2 ** (entry.attempts - 1);
      this.#logger.warn(
        { jobId: entry.id, attempt: entry.attempts, delayMs, err: describeError(outcome.error) },
        "turn failed, retrying",
      );
      // The lane stays held through the backoff: the retry runs before later jobs of its key.
      entry.state = "backoff";
      this.#waiting++;
      entry.retryTimer = setTimeout(() => this.#retry(entry), delayMs);
      this.#pump();
      return;
    }
    this.#jobs.delete(entry.id);
    let event: QueueEvent;
    if (outcome.ok) {
      event = { type: "completed", jobId: entry.id, result: outcome.result };
    } else {
      const error = describeError(outcome.error);
      this.#logger.warn({ jobId: entry.id, attempts: entry.attempts, err: error }, "turn failed");
      event = { type: "failed", jobId: entry.id, error, retryable: isRetryable(outcome.error) };
    }
    this.#finished.set(entry.id, event);
    this.#release(entry.lane);
    this.#pump();
    this.#listeners.emit(event);
  }

  #retry(entry: Entry): void {
    entry.retryTimer = undefined;
    const handler = this.#handler;
    if (entry.dropped || !handler) return;
    if (this.#active >= this.#concurrency) {
      // No slot: the retry goes first in its lane and the lane queues for a slot like any other.
      entry.state = "waiting";
      entry.lane.held = undefined;
      this.#requeueFirst(entry);
      return;
    }
    this.#start(entry, handler);
  }

  /** Puts a job back at the front of its lane (a retry that found no free slot). */
  #requeueFirst(entry: Entry): void {
    const lane = entry.lane;
    const rest = lane.fifo;
    lane.fifo = new Fifo();
    lane.fifo.push(entry);
    for (let next = rest.shift(); next; next = rest.shift()) lane.fifo.push(next);
    this.#markReady(lane);
  }

  #release(lane: Lane): void {
    lane.held = undefined;
    if (lane.fifo.length > 0) this.#markReady(lane);
    else if (!lane.inReady) this.#lanes.delete(lane.key);
  }
}

/** Builds the in-process queue of the embedded default. */
export function createEmbeddedJobQueue(options: EmbeddedJobQueueOptions): EmbeddedJobQueue {
  return new EmbeddedJobQueue(options);
}
