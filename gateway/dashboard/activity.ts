/**
 * The last hour of the gateway's activity, minute by minute: turns started and finished, their latency,
 * and errors (failed turns, failed deliveries), fed from the runner's events by the composition
 * root. It also fans every event out to the live-update streams. Bounded: 60 buckets and the 200
 * newest errors.
 */
import type { ActivityEvent } from "./types.js";

const MINUTE_MS = 60_000;
const WINDOW_MINUTES = 60;
const MAX_ERRORS = 200;

interface Bucket {
  minute: number;
  started: number;
  finished: number;
  failed: number;
  /** Latencies of the minute's finished turns, ms (at most 500 kept per minute for the median). */
  latencies: number[];
}

/** One minute of the chart. */
export interface MinuteFigures {
  /** Epoch ms of the minute's start. */
  at: number;
  turns: number;
  failed: number;
  /** Median latency of the minute's turns, ms; undefined without turns. */
  p50Ms?: number | undefined;
}

/** A subscriber to live events; it must not throw. */
export type ActivityListener = (event: ActivityEvent) => void;

/** The last hour of activity and the live event fan-out. */
export class Activity {
  readonly #buckets: Bucket[] = [];
  readonly #errors: Extract<ActivityEvent, { type: "error" | "turn-finished" }>[] = [];
  readonly #listeners = new Set<ActivityListener>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Records an event and passes it to every listener. */
  record(event: ActivityEvent): void {
    const bucket = this.#bucket(event.at);
    if (event.type === "turn-started") bucket.started++;
    else if (event.type === "turn-finished") {
      bucket.finished++;
      if (event.outcome === "failed") {
        bucket.failed++;
        this.#pushError(event);
      }
      if (event.durationMs !== undefined && bucket.latencies.length < 500)
        bucket.latencies.push(event.durationMs);
    } else this.#pushError(event);
    for (const listener of this.#listeners) listener(event);
  }

  /** Adds a listener; returns its removal. */
  subscribe(listener: ActivityListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** How many live streams are open. */
  get listeners(): number {
    return this.#listeners.size;
  }

  /** The last 60 minutes, oldest first, one entry per minute (empty minutes included). */
  minutes(): MinuteFigures[] {
    const current = Math.floor(this.#now() / MINUTE_MS);
    const byMinute = new Map(this.#buckets.map((b) => [b.minute, b]));
    const out: MinuteFigures[] = [];
    for (let m = current - WINDOW_MINUTES + 1; m <= current; m++) {
      const b = byMinute.get(m);
      out.push({
        at: m * MINUTE_MS,
        turns: b?.finished ?? 0,
        failed: b?.failed ?? 0,
        p50Ms: median(b?.latencies),
      });
    }
    return out;
  }

  /** Errors of the last hour, newest first. */
  errors(): { source: string; message: string; at: number }[] {
    const since = this.#now() - WINDOW_MINUTES * MINUTE_MS;
    return this.#errors
      .filter((e) => e.at >= since)
      .reverse()
      .map((e) =>
        e.type === "error"
          ? { source: e.source, message: e.message, at: e.at }
          : { source: `turn on ${e.platform}`, message: e.error ?? "the turn failed", at: e.at },
      );
  }

  #pushError(event: Extract<ActivityEvent, { type: "error" | "turn-finished" }>): void {
    this.#errors.push(event);
    if (this.#errors.length > MAX_ERRORS) this.#errors.shift();
  }

  #bucket(at: number): Bucket {
    const minute = Math.floor(at / MINUTE_MS);
    const last = this.#buckets[this.#buckets.length - 1];
    if (last && last.minute === minute) return last;
    const found = this.#buckets.find((b) => b.minute === minute);
    if (found) return found;
    const bucket: Bucket = { minute, started: 0, finished: 0, failed: 0, latencies: [] };
    this.#buckets.push(bucket);
    this.#buckets.sort((a, b) => a.minute - b.minute);
    const oldest = Math.floor(this.#now() / MINUTE_MS) - WINDOW_MINUTES;
    while (this.#buckets.length && this.#buckets[0]!.minute <= oldest) this.#buckets.shift();
    return bucket;
  }
}

function median(values: number[] | undefined): number | undefined {
  if (!values?.length) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}
