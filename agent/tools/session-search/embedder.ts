/**
 * The background embedder: after a turn commits it is woken (a timer, never the turn's own path), fills
 * the backlog from the messages it has not looked at, and embeds the backlog in batches until it is
 * empty. An endpoint that is down, refuses the key or answers vectors of the wrong length is an outage:
 * logged once, retried after a backoff from 1 s doubling to 5 minutes, and the recovery logged once.
 * A message the endpoint refuses on its own (a 400 for that input) is tried again later and dropped
 * from the backlog after `maxAttempts` (it stays findable by keywords). Everything it has not stored
 * stays in the backlog in `state.db`, so a crash or a restart resumes where it was.
 */
import { describeError, HeraldError } from "../../../core/errors.js";
import type { Logger } from "../../../core/logger.js";
import type { PendingMessage, SqliteMessageVectors } from "../../../sessions/index.js";
import type { EmbeddingsClient } from "./embeddings-client.js";

/** What the embedder writes through: the gateway state's transactions, and whether it is still open. */
export interface EmbedderState {
  transaction<T>(fn: () => T): T;
  readonly isOpen: boolean;
}

/** Options of `BackgroundEmbedder`. */
export interface EmbedderOptions {
  /** Messages per request. @defaultValue 64 */
  batchSize?: number | undefined;
  /** Tries of one message the endpoint refuses before it leaves the backlog. @defaultValue 5 */
  maxAttempts?: number | undefined;
  /** First retry delay after a failure; it doubles up to `maxBackoffMs`. @defaultValue 1000 */
  baseBackoffMs?: number | undefined;
  /** @defaultValue 300_000 */
  maxBackoffMs?: number | undefined;
  /** How long after a wake the embedder starts (turns that end together share a run). @defaultValue 250 */
  wakeDelayMs?: number | undefined;
}

/** Embeds the backlog in the background; `wake()` after each committed turn. */
export class BackgroundEmbedder {
  readonly #vectors: SqliteMessageVectors;
  readonly #client: EmbeddingsClient;
  readonly #state: EmbedderState;
  readonly #logger: Logger;
  readonly #batchSize: number;
  readonly #maxAttempts: number;
  readonly #baseBackoffMs: number;
  readonly #maxBackoffMs: number;
  readonly #wakeDelayMs: number;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  /** The request in flight (one per request: the SDK leaves a listener on the signal it is given). */
  #inflight: AbortController | undefined;
  #failures = 0;
  #stopped = false;
  #again = false;
  /** Messages embedded since start (status, benchmarks). */
  embedded = 0;

  constructor(
    vectors: SqliteMessageVectors,
    client: EmbeddingsClient,
    ports: { state: EmbedderState; logger: Logger },
    options: EmbedderOptions = {},
  ) {
    this.#vectors = vectors;
    this.#client = client;
    this.#state = ports.state;
    this.#logger = ports.logger;
    this.#batchSize = options.batchSize ?? 64;
    this.#maxAttempts = options.maxAttempts ?? 5;
    this.#baseBackoffMs = options.baseBackoffMs ?? 1000;
    this.#maxBackoffMs = options.maxBackoffMs ?? 300_000;
    this.#wakeDelayMs = options.wakeDelayMs ?? 250;
  }

  /** Whether the endpoint is failing now (the last request failed as an outage). */
  get failing(): boolean {
    return this.#failures > 0;
  }

  /** Schedules a run soon, unless one is scheduled or running (it will see the new messages). */
  wake(): void {
    if (this.#stopped || this.#timer) return;
    if (this.#running) this.#again = true;
    else this.#schedule(this.#wakeDelayMs);
  }

  /**
   * Runs until the backlog is empty, or until the endpoint fails (the retry is then scheduled). Resolves
   * when that run ended; a run already under way is joined.
   */
  drain(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#running ??= this.#run().finally(() => {
      this.#running = undefined;
      // Woken while the run was ending: messages committed since may not have been seen.
      if (this.#again && !this.#timer) this.#schedule(this.#wakeDelayMs);
      this.#again = false;
    });
    return this.#running;
  }

  /** Stops: no new run, the request in flight aborted; resolves when the run ended. Idempotent. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#inflight?.abort();
    await this.#running;
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.drain();
    }, delayMs);
    this.#timer.unref();
  }

  async #run(): Promise<void> {
    while (!this.#stopped && this.#state.isOpen) {
      while (this.#state.transaction(() => this.#vectors.fillBacklog()).advanced) {
        await yieldTurn();
        if (this.#stopped || !this.#state.isOpen) return;
      }
      const batch = this.#vectors.due(this.#batchSize);
      if (batch.length === 0) return;
      if (!(await this.#embed(batch))) return;
      await yieldTurn();
    }
  }

  /** Embeds one batch; false when the run should end (an outage: a retry is scheduled). */
  async #embed(batch: PendingMessage[]): Promise<boolean> {
    let vectors: Float32Array[];
    const inflight = new AbortController();
    this.#inflight = inflight;
    try {
      vectors = await this.#client.embed(
        batch.map((m) => m.text),
        inflight.signal,
      );
    } catch (err) {
      if (this.#stopped) return false;
      if (isOutage(err)) {
        this.#outage(err);
        return false;
      }
      return this.#refused(batch, err);
    }
    if (!this.#state.isOpen) return false;
    this.#state.transaction(() =>
      this.#vectors.store(
        batch.map((m, i) => ({ messageId: m.messageId, sessionId: m.sessionId, vector: vectors[i]! })),
      ),
    );
    this.embedded += batch.length;
    if (this.#failures > 0)
      this.#logger.info({ pending: this.#vectors.pending() }, "embeddings endpoint answers again");
    this.#failures = 0;
    return true;
  }

  #outage(err: unknown): void {
    this.#failures++;
    const delayMs = Math.min(this.#maxBackoffMs, this.#baseBackoffMs * 2 ** (this.#failures - 1));
    if (this.#failures === 1)
      this.#logger.warn(
        { err: describeError(err), retryInMs: delayMs },
        "embeddings endpoint failing; recall by meaning waits (keyword search still works), retrying with backoff",
      );
    this.#schedule(delayMs);
  }

  /**
   * The endpoint refused this batch on its own merits: a batch of several is split so one bad message
   * does not hold back the rest; a single message is tried again later, then dropped.
   */
  async #refused(batch: PendingMessage[], err: unknown): Promise<boolean> {
    if (batch.length > 1) {
      const half = Math.ceil(batch.length / 2);
      return (await this.#embed(batch.slice(0, half))) && (await this.#embed(batch.slice(half)));
    }
    const message = batch[0]!;
    const delayMs = Math.min(this.#maxBackoffMs, this.#baseBackoffMs * 2 ** message.attempts);
    const dropped = this.#state.transaction(() =>
      this.#vectors.retryLater([message.messageId], describeError(err), delayMs, this.#maxAttempts),
    );
    if (dropped > 0)
      this.#logger.warn(
        { messageId: message.messageId, err: describeError(err) },
        "embeddings endpoint refused a message; it stays findable by keywords only",
      );
    this.#schedule(delayMs);
    return true;
  }
}

/** Failures of the endpoint as a whole (not of one input): down, slow, the key, the configuration. */
function isOutage(err: unknown): boolean {
  if (!(err instanceof HeraldError)) return true;
  return err.retryable || err.code === "unauthorized" || err.code === "config_invalid";
}

function yieldTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
