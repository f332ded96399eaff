/**
 * Delivers outbox items to their adapters: in order within a chat, independently across chats, retried
 * with backoff (or the platform's retry-after) until the platform confirms. An item leaves the outbox
 * only when delivered, or after `maxAttempts` as failed (logged, kept for inspection).
 */

import { withButtonsFallback } from "../core/buttons.js";
import { formatChat } from "../core/chat.js";
import { describeError, PlatformError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { PlatformAdapter } from "../core/types.js";
import type { Outbox, OutboxItem } from "../sessions/types.js";

export interface OutboxDispatcherOptions {
  outbox: Outbox;
  adapters: ReadonlyMap<string, PlatformAdapter>;
  logger: Logger;
  /** @defaultValue 8 */
  maxAttempts?: number;
  /** First retry delay; doubles each attempt up to `maxDelayMs`. @defaultValue 1000 */
  baseDelayMs?: number;
  /** @defaultValue 60_000 */
  maxDelayMs?: number;
  /**
   * Runs each outbox write in a state transaction, so with group commit the marks of one moment commit
   * together instead of one commit each. @defaultValue runs the write as is
   */
  transaction?: <T>(record: () => T) => T;
  /** Called after an item was delivered (or failed for good, with `lastError` set). Must not throw. */
  onSettled?: (item: OutboxItem, outcome: "delivered" | "failed", messageIds: string[]) => void;
  now?: () => number;
}

export class OutboxDispatcher {
  private readonly chains = new Map<string, Promise<void>>();
  private readonly scheduled = new Set<string>();
  private readonly sleepers = new Set<() => void>();
  private stopped = false;
  private readonly maxAttempts: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly now: () => number;

  constructor(private readonly options: OutboxDispatcherOptions) {
    this.maxAttempts = options.maxAttempts ?? 8;
    this.baseDelayMs = options.baseDelayMs ?? 1000;
    this.maxDelayMs = options.maxDelayMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  /** Delivers every undelivered item (at start: what a previous process left). */
  resume(): void {
    for (const item of this.options.outbox.pending()) this.deliver(item);
  }

  /** Queues one item for delivery behind earlier items of the same chat. */
  deliver(item: OutboxItem): void {
    if (this.stopped || this.scheduled.has(item.id)) return;
    this.scheduled.add(item.id);
    const key = formatChat(item.chat);
    const previous = this.chains.get(key) ?? Promise.resolve();
    const next = previous.then(() => this.run(item)).finally(() => this.scheduled.delete(item.id));
    this.chains.set(key, next);
    void next.finally(() => {
      if (this.chains.get(key) === next) this.chains.delete(key);
    });
  }

  /** Waits until every chain in flight now has settled (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.chains.size > 0) await Promise.all([...this.chains.values()]);
  }

  /**
   * Stops delivering and waits (up to `timeoutMs`) for sends in flight to settle; items left keep their
   * place in the outbox for the next start.
   */
  async stop(timeoutMs = 5000): Promise<void> {
    this.stopped = true;
    for (const wake of this.sleepers) wake();
    // Let sends already on the wire settle and be recorded before the state file closes.
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
      timer.unref?.();
    });
    await Promise.race([this.idle(), timeout]);
    clearTimeout(timer);
  }

  /** Tries until delivered, failed for good, or stopped; holds the chat's chain meanwhile (order). */
  private async run(item: OutboxItem): Promise<void> {
    let current: OutboxItem | undefined = item;
    while (current && !this.stopped) {
      const retry = await this.attempt(current);
      if (!retry) return;
      await this.sleep(retry.delayMs);
      current = retry.item;
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      timer.unref?.();
      this.sleepers.add(wake);
    });
  }

  /** One delivery attempt; returns the retry to wait for, or undefined when settled. */
  private async attempt(item: OutboxItem): Promise<{ item: OutboxItem; delayMs: number } | undefined> {
    const { outbox } = this.options;
    const adapter = this.options.adapters.get(item.chat.platform);
    if (!adapter) {
      // The platform is not running (not configured, or failed to start): keep the item for later.
      return this.settle(() =>
        this.retry(item, `no adapter for ${item.chat.platform} is running`, this.maxDelayMs),
      );
    }
    let chunksSent = item.chunksSent;
    let messageIds: string[];
    try {
      // A platform without buttons gets their text form (the same choices, typed).
      const message = adapter.sendsButtons ? item.message : withButtonsFallback(item.message);
      ({ messageIds } = await adapter.send(item.chat, message, {
        fromChunk: item.chunksSent,
        onChunkSent: (index) => {
          chunksSent = index + 1;
          this.settle(() => this.write(() => outbox.chunkSent(item.id, index)));
        },
      }));
    } catch (err) {
      const retryable = err instanceof PlatformError ? err.retryable : true;
      const retryAfterMs = err instanceof PlatformError ? err.retryAfterMs : undefined;
      const current = { ...item, chunksSent };
      if (!retryable) return this.settle(() => this.fail(current, describeError(err)));
      const backoff = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** item.attempts);
      return this.settle(() => this.retry(current, describeError(err), retryAfterMs ?? backoff));
    }
    return this.settle(() => {
      this.write(() => outbox.delivered(item.id));
      this.options.onSettled?.(item, "delivered", messageIds);
      return undefined;
    });
  }

  /**
   * Records an attempt's outcome. A failure to record (the state file closed under a shutdown) is
   * logged and ends this item's chain; the item keeps its last recorded state for the next start.
   */
  private settle<T>(record: () => T): T | undefined {
    try {
      return record();
    } catch (err) {
      this.options.logger.error({ error: describeError(err) }, "could not record a delivery outcome");
      return undefined;
    }
  }

  /** One write to the outbox, in its own transaction when the state gives one. */
  private write(fn: () => void): void {
    if (this.options.transaction) this.options.transaction(fn);
    else fn();
  }

  private retry(item: OutboxItem, error: string, delayMs: number) {
    if (item.attempts + 1 >= this.maxAttempts) return this.fail(item, error);
    this.options.logger.warn(
      { outboxId: item.id, chat: formatChat(item.chat), error, attempt: item.attempts + 1, delayMs },
      "delivery failed, will retry",
    );
    this.write(() => this.options.outbox.retryLater(item.id, error, delayMs, this.now()));
    const again: OutboxItem = {
      ...item,
      attempts: item.attempts + 1,
      nextAttemptAt: this.now() + delayMs,
      lastError: error,
    };
    return { item: again, delayMs };
  }

  private fail(item: OutboxItem, error: string): undefined {
    this.options.logger.error(
      { outboxId: item.id, chat: formatChat(item.chat), error, attempts: item.attempts + 1 },
      "delivery failed for good",
    );
    this.write(() => this.options.outbox.failed(item.id, error));
    this.options.onSettled?.({ ...item, lastError: error }, "failed", []);
    return undefined;
  }
}
