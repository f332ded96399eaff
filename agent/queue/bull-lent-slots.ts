/**
 * Slot lending on the Redis queue (`JobHandler`'s `ctx.idle`): while a job only waits (a parent for
 * its `delegate_task` children), its BullMQ worker takes one more job, so parents waiting in every
 * slot of every worker never keep their children queued until the children's time budget runs out.
 *
 * Why lending rather than the alternatives: a separate queue for children needs one per delegation
 * depth (a child may delegate and wait too) and a cap of its own per lane that idles when nobody
 * delegates; giving the slot back and resuming the parent later would mean suspending an agent loop
 * that lives in memory. Lending keeps one queue, one cap and the embedded queue's semantics.
 */
import type { Worker } from "bullmq";
import { describeError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";

/** The lending of one job attempt: the `idle` its handler gets, and `end()` once the handler settled. */
export interface JobLending {
  idle<T>(work: Promise<T>): Promise<T>;
  /** The handler settled: a wait it left open gives the slot back now, and later waits lend nothing. */
  end(): void;
}

/**
 * The lent slots of one consumer. Lending raises the BullMQ worker's concurrency by one; taking back
 * lowers it, and BullMQ then fetches nothing until fewer jobs than that run, so the worker may be past
 * its cap for a moment (the jobs that ran in lent slots finish first), as on the embedded queue.
 */
export class LentSlots {
  readonly #logger: Logger;
  #worker: Worker | undefined;
  /** The consumer's own cap; the worker's concurrency is this plus the slots lent now. */
  #concurrency = 1;
  #lent = 0;
  /** Wakes of BullMQ's fetch loop, one after the other. */
  #waking: Promise<void> = Promise.resolve();

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** Lends slots of `worker`, whose own cap is `concurrency`. */
  attach(worker: Worker, concurrency: number): void {
    this.#worker = worker;
    this.#concurrency = concurrency;
  }

  /** The worker is closing: leave its concurrency alone from now on. Idempotent. */
  detach(): void {
    this.#worker = undefined;
  }

  /** The lending of one job attempt; nested or parallel waits of it lend one slot. */
  forJob(): JobLending {
    let waits = 0;
    let lent = false;
    let ended = false;
    const giveBack = () => {
      if (!lent) return;
      lent = false;
      this.#change(-1);
    };
    return {
      idle: async <T>(work: Promise<T>): Promise<T> => {
        waits++;
        if (!lent && !ended) {
          lent = true;
          this.#change(1);
        }
        try {
          return await work;
        } finally {
          waits--;
          if (waits === 0) giveBack();
        }
      },
      end: () => {
        ended = true;
        giveBack();
      },
    };
  }

  #change(delta: 1 | -1): void {
    this.#lent = Math.max(0, this.#lent + delta);
    const worker = this.#worker;
    if (!worker) return;
    worker.concurrency = this.#concurrency + this.#lent;
    if (delta > 0) this.#wake(worker);
  }

  /**
   * BullMQ's fetch loop, once full, looks at its concurrency again only when one of its jobs ends (a
   * raised `concurrency` alone is not seen while the parent waits). `pause(true)` + `resume()` wakes
   * it: resuming a running worker makes it fetch again without waiting for its active jobs. Both are
   * public; the contract suite's lending cases fail if a BullMQ upgrade stops this from working.
   */
  #wake(worker: Worker): void {
    this.#waking = this.#waking.then(async () => {
      if (this.#worker !== worker || worker.isPaused()) return;
      try {
        await worker.pause(true);
        await worker.resume();
      } catch (err) {
        this.#logger.warn({ err: describeError(err) }, "could not wake the worker for a lent slot");
      }
    });
  }
}
