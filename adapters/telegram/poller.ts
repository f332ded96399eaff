/**
 * Long polling that never loses an update. Telegram confirms every update below the `offset` of the next
 * `getUpdates` call, so the offset passes an update only after its handler resolved, that is after the
 * gateway recorded it in the inbound ledger. Within a batch, updates run concurrently across chats and in
 * order within a chat; the next batch is fetched once the batch is recorded (recording takes
 * milliseconds; the turns themselves run later, outside the handler).
 *
 * grammY's `bot.start()` would confirm after each handler too, but handles one update at a time;
 * `@grammyjs/runner` fetches the next batch (and so confirms the last one) while handlers still run, which
 * loses the updates in flight when the process dies. Hence this loop.
 */
import { describeError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { AdapterStatus } from "../../core/types.js";
import { classifyPollError } from "./api-errors.js";

/** The updates the adapter asks for; others are never delivered. */
export const ALLOWED_UPDATES = ["message", "callback_query"] as const;

/** Thrown by a handler when the gateway could not record the update: it is fetched again later. */
export class NotRecordedError extends Error {
  constructor(cause: unknown) {
    super("the gateway did not record the update", { cause });
    this.name = "NotRecordedError";
  }
}

export interface PollerOptions {
  getUpdates(
    params: { offset?: number; limit: number; timeout: number; allowed_updates: typeof ALLOWED_UPDATES },
    signal: AbortSignal,
  ): Promise<unknown>;
  deleteWebhook(): Promise<unknown>;
  /** Handles one update. Rejects with NotRecordedError to have it fetched again; other errors skip it. */
  handle(update: { update_id: number } & Record<string, unknown>): Promise<void>;
  /** Updates with the same key are handled in order. */
  orderKey(update: Record<string, unknown>): string;
  onState(state: AdapterStatus["state"], detail?: string): void;
  logger: Logger;
  pollTimeoutSeconds: number;
  backoffMs: number;
  maxBackoffMs: number;
}

/**
 * How often one update may fail to be recorded, while others are recorded, before it is skipped (so one
 * update the gateway can never record cannot stall its chat for good).
 */
const MAX_RECORD_ATTEMPTS = 5;

export class UpdatePoller {
  private running = false;
  private abort = new AbortController();
  private loopDone: Promise<void> = Promise.resolve();
  /** Offset to send next; undefined until the first batch (Telegram then starts at its own confirmed point). */
  private offset: number | undefined;
  /** The offset moved past handled updates since the last getUpdates call carried it. */
  private unconfirmed = false;
  private readonly attempts = new Map<number, number>();
  /** Updates at or above the offset that are already handled (a retry of an earlier one brings them back). */
  private readonly handled = new Set<number>();
  private wakeSleep: (() => void) | undefined;
  private generation = 0;
  /** Batches in a row in which some update could not be recorded (for the backoff). */
  private failedBatches = 0;

  constructor(private readonly options: PollerOptions) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.abort = new AbortController();
    // A loop of an earlier start may still be inside a handler that never returned: it must not resume.
    const generation = ++this.generation;
    this.loopDone = this.loop(generation).catch((err: unknown) => {
      this.options.logger.error({ error: describeError(err) }, "telegram polling loop ended unexpectedly");
      this.options.onState("failed", describeError(err));
    });
  }

  /**
   * Stops polling. Waits up to `graceMs` for the batch in hand to be recorded, then confirms it to
   * Telegram with one last `getUpdates`; updates not recorded by then stay unconfirmed and come again.
   */
  async stop(graceMs: number): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.abort.abort();
    this.wakeSleep?.();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.loopDone, new Promise((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
    if (this.unconfirmed && this.offset !== undefined) {
      const params = { offset: this.offset, limit: 1, timeout: 0, allowed_updates: ALLOWED_UPDATES };
      await this.options.getUpdates(params, new AbortController().signal).catch((err: unknown) => {
        this.options.logger.warn({ error: describeError(err) }, "telegram final offset confirmation failed");
      });
      this.unconfirmed = false;
    }
  }

  private active(generation: number): boolean {
    return this.running && generation === this.generation;
  }

  private async loop(generation: number): Promise<void> {
    const { logger, onState } = this.options;
    let failures = 0;
    while (this.active(generation)) {
      let batch: unknown;
      try {
        const params = {
          ...(this.offset !== undefined ? { offset: this.offset } : {}),
          limit: 100,
          timeout: this.options.pollTimeoutSeconds,
          allowed_updates: ALLOWED_UPDATES,
        };
        this.unconfirmed = false;
        batch = await this.options.getUpdates(params, this.abort.signal);
      } catch (err) {
        if (!this.active(generation)) break;
        failures += 1;
        const verdict = classifyPollError(err, failures, this.options);
        if (verdict.kind === "fatal") {
          logger.error({ error: describeError(err) }, verdict.message);
          onState("failed", verdict.message);
          this.running = false;
          break;
        }
        if (verdict.kind === "webhook") {
          logger.warn({}, verdict.message);
          await this.options.deleteWebhook().catch(() => undefined);
        } else if (verdict.level === "error") {
          logger.error({ error: describeError(err), retryInMs: verdict.delayMs }, verdict.message);
        } else {
          logger.warn({ error: describeError(err), retryInMs: verdict.delayMs }, verdict.message);
        }
        onState(verdict.kind === "webhook" ? "reconnecting" : verdict.state, verdict.message);
        await this.sleep(verdict.kind === "webhook" ? 0 : verdict.delayMs);
        continue;
      }
      if (failures > 0) logger.info({ failures }, "telegram polling recovered");
      failures = 0;
      onState("running");
      const { next, retry } = await this.dispatch(Array.isArray(batch) ? batch : []);
      // The batch's turns start (their model requests go out) before the next poll is sent.
      await new Promise((resolve) => setImmediate(resolve));
      if (generation !== this.generation) break;
      if (next !== undefined && next !== this.offset) {
        this.offset = next;
        this.unconfirmed = true;
      }
      this.failedBatches = retry ? this.failedBatches + 1 : 0;
      if (retry) {
        const { backoffMs, maxBackoffMs } = this.options;
        await this.sleep(Math.min(maxBackoffMs, backoffMs * 2 ** (this.failedBatches - 1)));
      }
    }
  }

  /** Handles a batch; returns the offset that confirms what was recorded, and whether to slow down. */
  private async dispatch(batch: unknown[]): Promise<{ next: number | undefined; retry: boolean }> {
    const { logger } = this.options;
    const seen = new Set<number>();
    const groups = new Map<string, ({ update_id: number } & Record<string, unknown>)[]>();
    let maxId: number | undefined;
    for (const item of batch) {
      const id = (item as { update_id?: unknown } | null)?.update_id;
      if (typeof id !== "number" || !Number.isInteger(id)) {
        logger.warn({ kind: typeof item }, "telegram malformed update skipped (no update_id)");
        continue;
      }
      maxId = Math.max(maxId ?? id, id);
      // Below the offset: recorded and confirmed. Handled while an earlier update failed: recorded.
      if ((this.offset !== undefined && id < this.offset) || this.handled.has(id) || seen.has(id)) continue;
      seen.add(id);
      const update = item as { update_id: number } & Record<string, unknown>;
      const key = this.options.orderKey(update);
      const list = groups.get(key) ?? [];
      list.push(update);
      groups.set(key, list);
    }
    const failed: { update: { update_id: number }; cause: unknown }[] = [];
    let recorded = 0;
    await Promise.all(
      [...groups.values()].map(async (updates) => {
        for (const update of updates) {
          const outcome = await this.handleOne(update);
          // After a failure, the chat's later updates wait for the retry (order within a chat).
          if (outcome !== true) return void failed.push({ update, cause: outcome.cause });
          recorded += 1;
          this.handled.add(update.update_id);
        }
      }),
    );
    let firstFailed: number | undefined;
    for (const { update, cause } of failed) {
      const id = update.update_id;
      firstFailed = Math.min(firstFailed ?? id, id);
      // Only a failure while other updates were recorded counts against this update: when nothing can
      // be recorded (the database is down), every update waits, however long, and none is dropped.
      const attempts = (this.attempts.get(id) ?? 0) + (recorded > 0 ? 1 : 0);
      this.attempts.set(id, attempts);
      if (attempts >= MAX_RECORD_ATTEMPTS) {
        // Fetched again, skipped then, so the chat's later updates go on.
        this.attempts.delete(id);
        this.handled.add(id);
        logger.error(
          { updateId: id, attempts, error: describeError(cause) },
          "telegram update could not be recorded, skipped",
        );
      } else {
        logger.warn(
          { updateId: id, attempts, error: describeError(cause) },
          "telegram update not recorded, will fetch again",
        );
      }
    }
    const result =
      maxId === undefined
        ? { next: this.offset, retry: batch.length > 0 }
        : firstFailed !== undefined
          ? { next: firstFailed, retry: true }
          : { next: Math.max(this.offset ?? 0, maxId + 1), retry: false };
    const next = result.next;
    if (next !== undefined) for (const id of this.handled) if (id < next) this.handled.delete(id);
    return result;
  }

  /** True when the update is done with (recorded, or skipped as unusable); else why it was not recorded. */
  private async handleOne(
    update: { update_id: number } & Record<string, unknown>,
  ): Promise<true | NotRecordedError> {
    try {
      await this.options.handle(update);
      this.attempts.delete(update.update_id);
      return true;
    } catch (err) {
      if (err instanceof NotRecordedError) return err;
      this.options.logger.error(
        { updateId: update.update_id, error: describeError(err) },
        "telegram update failed, skipped",
      );
      return true;
    }
  }

  private sleep(ms: number): Promise<void> {
    if (ms <= 0 || !this.running) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeSleep = done;
    });
  }
}
