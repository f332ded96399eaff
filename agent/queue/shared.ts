/**
 * Small pieces both queue backends share: the retry decision, the listener fan-out and a bounded
 * memory of finished jobs.
 */
import { describeError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { QueueEvent } from "../../core/turn.js";

/** Retry policy defaults shared by both backends. */
export const DEFAULT_ATTEMPTS = 3;
export const DEFAULT_BACKOFF_MS = 1_000;
export const DEFAULT_CONCURRENCY = 4;
/** How many finished jobs are remembered so a re-enqueue can re-emit their outcome. */
export const DEFAULT_MAX_FINISHED = 10_000;

/**
 * Whether a handler's failure may succeed on another try. Duck-typed on `retryable` so errors from
 * another copy of the module (or a subclass elsewhere) count as well as `HeraldError`.
 */
export function isRetryable(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as { retryable?: unknown }).retryable === true;
}

/** Listeners of queue events. A listener that throws is logged and does not stop the others. */
export class Listeners {
  readonly #listeners = new Set<(event: QueueEvent) => void>();
  readonly #logger: Logger;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  get size(): number {
    return this.#listeners.size;
  }

  add(listener: (event: QueueEvent) => void): () => void {
    // Wrap so the same function subscribed twice gets two independent subscriptions.
    const entry = (event: QueueEvent) => listener(event);
    this.#listeners.add(entry);
    return () => {
      this.#listeners.delete(entry);
    };
  }

  emit(event: QueueEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch (err) {
        this.#logger.error(
          { jobId: event.jobId, event: event.type, err: describeError(err) },
          "queue listener threw",
        );
      }
    }
  }

  clear(): void {
    this.#listeners.clear();
  }
}

/** A map that forgets its least recently used entries beyond `max`. */
export class LruMap<V> {
  readonly #map = new Map<string, V>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  get(key: string): V | undefined {
    const value = this.#map.get(key);
    if (value !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, value);
    }
    return value;
  }

  set(key: string, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.#max) {
      const oldest = this.#map.keys().next();
      if (!oldest.done) this.#map.delete(oldest.value);
    }
  }

  has(key: string): boolean {
    return this.#map.has(key);
  }

  delete(key: string): void {
    this.#map.delete(key);
  }

  clear(): void {
    this.#map.clear();
  }
}

/** A FIFO with O(1) amortised push and shift (Array#shift is O(n) on long arrays). */
export class Fifo<T> {
  #items: (T | undefined)[] = [];
  #head = 0;

  get length(): number {
    return this.#items.length - this.#head;
  }

  push(item: T): void {
    this.#items.push(item);
  }

  shift(): T | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head] = undefined;
    this.#head++;
    if (this.#head === this.#items.length) {
      this.#items = [];
      this.#head = 0;
    } else if (this.#head > 1_024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }
}
