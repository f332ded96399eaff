/**
 * The exchanges on their way to the providers: a backlog in `state.db` (table
 * `memory_provider_backlog`, created on first open), one row per exchange and provider, each exchange
 * with its agent (so a retried one goes to that agent's records at the provider), sent oldest
 * first, one at a time per provider, deleted once the provider accepted it. A provider that fails is
 * retried after 1 s doubling to 5 minutes; its outage is logged once when it starts and once when it
 * ends (an {@link OutageLog} shared with the turn-start reads). An exchange the provider refuses for
 * good (400, 404, 413, 422) is dropped with a warning. Rows wait across restarts; past
 * {@link MAX_WAITING} per provider the oldest are dropped.
 */
import type Database from "better-sqlite3";
import { agentOfKey } from "../../../core/chat.js";
import { describeError } from "../../../core/errors.js";
import type { Logger } from "../../../core/logger.js";
import { type Exchange, type MemoryProvider, MemoryProviderError } from "./types.js";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS memory_provider_backlog (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  provider   TEXT NOT NULL,
  exchange   TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS memory_provider_backlog_provider ON memory_provider_backlog(provider, id);
`;

/** Exchanges kept per provider while it is down; older ones are dropped past this. */
export const MAX_WAITING = 5000;

/** What the backlog writes through (the gateway's `SqliteState` has this shape). */
export interface BacklogState {
  readonly database: Database.Database;
  transaction<T>(fn: () => T): T;
  readonly isOpen: boolean;
}

/** Logs a provider's outage once when it starts and once when it ends, whoever noticed. */
export class OutageLog {
  #down = false;
  constructor(
    private readonly provider: string,
    private readonly logger: Logger,
  ) {}

  get down(): boolean {
    return this.#down;
  }

  /** A call failed: the first failure of an outage is logged, with what waits. */
  failed(err: unknown, waiting?: number): void {
    if (this.#down) return;
    this.#down = true;
    this.logger.warn(
      { provider: this.provider, err: describeError(err), ...(waiting === undefined ? {} : { waiting }) },
      "memory provider unavailable; turns go on without it and exchanges wait in the backlog",
    );
  }

  /** A call succeeded: the end of an outage is logged. */
  succeeded(): void {
    if (!this.#down) return;
    this.#down = false;
    this.logger.info({ provider: this.provider }, "memory provider available again");
  }
}

/** Timing of the retries (tests shorten it). */
export interface BacklogTiming {
  /** @defaultValue 1000 */
  retryBaseMs?: number | undefined;
  /** @defaultValue 300 000 */
  retryMaxMs?: number | undefined;
}

/** The backlog of one provider and the loop that empties it. */
export class ProviderBacklog {
  readonly #state: BacklogState;
  readonly #provider: MemoryProvider;
  readonly #outage: OutageLog;
  readonly #logger: Logger;
  readonly #timing: Required<BacklogTiming>;
  readonly #stop = new AbortController();
  #running: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #delayMs = 0;

  constructor(
    state: BacklogState,
    provider: MemoryProvider,
    parts: { outage: OutageLog; logger: Logger; timing?: BacklogTiming | undefined },
  ) {
    this.#state = state;
    this.#provider = provider;
    this.#outage = parts.outage;
    this.#logger = parts.logger;
    this.#timing = { retryBaseMs: 1000, retryMaxMs: 300_000, ...parts.timing };
    state.database.exec(SCHEMA);
  }

  /** Exchanges waiting for this provider. */
  waiting(): number {
    const row = this.#state.database
      .prepare("SELECT count(*) AS n FROM memory_provider_backlog WHERE provider = ?")
      .get(this.#provider.name) as { n: number };
    return row.n;
  }

  /** Queues `exchange` (durable with the next commit) and wakes the sender. */
  add(exchange: Exchange): void {
    const name = this.#provider.name;
    this.#state.transaction(() => {
      this.#state.database
        .prepare("INSERT INTO memory_provider_backlog (provider, exchange, created_at) VALUES (?, ?, ?)")
        .run(name, JSON.stringify(exchange), Date.now());
      const dropped = this.#state.database
        .prepare(
          `DELETE FROM memory_provider_backlog WHERE provider = ? AND id <= (
             SELECT id FROM memory_provider_backlog WHERE provider = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`,
        )
        .run(name, name, MAX_WAITING).changes;
      if (dropped > 0)
        this.#logger.warn(
          { provider: name, dropped },
          "memory provider backlog full; the oldest exchanges dropped",
        );
    });
    this.wake();
  }

  /** Starts sending unless it is sending or waiting to retry. */
  wake(): void {
    if (this.#running || this.#timer || this.#stop.signal.aborted) return;
    this.#running = this.#drain()
      .catch((err: unknown) => {
        // The state file closed under it (a stop without draining): what is left waits for the next start.
        if (this.#state.isOpen)
          this.#logger.error(
            { provider: this.#provider.name, err: describeError(err) },
            "memory provider backlog failed",
          );
      })
      .finally(() => {
        this.#running = undefined;
      });
  }

  /** Stops sending (what is left waits for the next start). */
  async stop(): Promise<void> {
    this.#stop.abort();
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  async #drain(): Promise<void> {
    const db = this.#state.database;
    const name = this.#provider.name;
    const next = db.prepare(
      "SELECT id, exchange FROM memory_provider_backlog WHERE provider = ? ORDER BY id LIMIT 1",
    );
    for (;;) {
      if (this.#stop.signal.aborted || !this.#state.isOpen) return;
      const row = next.get(name) as { id: number; exchange: string } | undefined;
      if (!row) return;
      const done = () =>
        this.#state.transaction(() =>
          db.prepare("DELETE FROM memory_provider_backlog WHERE id = ?").run(row.id),
        );
      try {
        await this.#provider.addExchange(exchangeOf(row.exchange), this.#stop.signal);
        this.#delayMs = 0;
        this.#outage.succeeded();
        done();
      } catch (err) {
        if (this.#stop.signal.aborted) return;
        if (err instanceof MemoryProviderError && !err.retryable) {
          this.#logger.warn(
            { provider: name, err: describeError(err) },
            "memory provider refused an exchange; dropped",
          );
          done();
          continue;
        }
        this.#outage.failed(err, this.waiting());
        this.#delayMs = Math.min(
          this.#timing.retryMaxMs,
          this.#delayMs ? this.#delayMs * 2 : this.#timing.retryBaseMs,
        );
        this.#timer = setTimeout(() => {
          this.#timer = undefined;
          this.wake();
        }, this.#delayMs);
        this.#timer.unref();
        return;
      }
    }
  }
}

/** A stored exchange; one queued before exchanges carried their agent takes it from its session key. */
function exchangeOf(json: string): Exchange {
  const exchange = JSON.parse(json) as Exchange;
  if (!("agent" in exchange)) {
    const agent = agentOfKey(exchange.sessionKey);
    if (agent) exchange.agent = agent;
  }
  return exchange;
}
