import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { HeraldError } from "../core/errors.js";
import type { GroupSessionMode, KeyValueStore } from "../core/types.js";
import { migrate } from "./migrations.js";
import { SqliteKv } from "./sqlite-kv.js";
import { SqliteLedger } from "./sqlite-ledger.js";
import { SqliteOutbox } from "./sqlite-outbox.js";
import { SqlitePairing } from "./sqlite-pairing.js";
import { SqliteResponseStore } from "./sqlite-responses.js";
import { SqliteSessionStore } from "./sqlite-session-store.js";
import { SqliteTurnJournal } from "./sqlite-turn-journal.js";
import { SqliteUsageLedger } from "./sqlite-usage.js";

/** Options of `SqliteState.open`. */
export interface SqliteStateOptions {
  /** How long a write waits for another process's lock before failing. @defaultValue 5000 */
  busyTimeoutMs?: number | undefined;
  /** How `sessions.open` keys group chats. @defaultValue "per_user" */
  groupMode?: GroupSessionMode | undefined;
  /** Failed delivery attempts after which an outbox item is marked failed. @defaultValue 10 */
  outboxMaxAttempts?: number | undefined;
  /**
   * Group commit: every `transaction` of one event-loop turn runs as a savepoint of one batch that
   * commits once, on `setImmediate`, and `afterCommit` effects run after that commit. For a long-running
   * process with many writes a second (the gateway): concurrent turns share the pages each would write.
   * Off, each `transaction` commits before it returns. @defaultValue false
   */
  groupCommit?: boolean | undefined;
  /**
   * Budget of the cache of recent session histories (approximate bytes; 0: none). Only for the process
   * that is the one writer of messages, the gateway. @defaultValue 0
   */
  historyCacheBytes?: number | undefined;
  /** Told when an `afterCommit` effect of a batch committed on `setImmediate` throws. @defaultValue rethrow */
  onEffectError?: ((err: unknown) => void) | undefined;
}

/** The writes of one event-loop turn, committed together, and what waits for that commit. */
interface Batch {
  effects: (() => void)[];
  waiters: { resolve: () => void; reject: (err: unknown) => void }[];
}

/**
 * All durable state of the gateway on one SQLite file (`HERALD_HOME/state.db`): sessions and messages,
 * the inbound ledger, the turn journal, the outbox, pairing and adapter key-value state. It owns the
 * database; its members share it, so `transaction` can span several of them.
 */
export class SqliteState {
  readonly sessions: SqliteSessionStore;
  readonly ledger: SqliteLedger;
  readonly turns: SqliteTurnJournal;
  readonly outbox: SqliteOutbox;
  readonly pairing: SqlitePairing;
  /** Token usage per turn and model. */
  readonly usage: SqliteUsageLedger;
  /** The API server's stored responses. */
  readonly responses: SqliteResponseStore;
  readonly #db: Database.Database;
  readonly #kv: SqliteKv;
  readonly #tx: Database.Transaction<(fn: () => unknown) => unknown>;
  readonly #groupCommit: boolean;
  readonly #onEffectError: (err: unknown) => void;
  #batch: Batch | undefined;

  private constructor(db: Database.Database, options: SqliteStateOptions) {
    this.#db = db;
    this.#groupCommit = options.groupCommit ?? false;
    this.#onEffectError =
      options.onEffectError ??
      ((err) => {
        throw err;
      });
    this.sessions = new SqliteSessionStore(db, {
      groupMode: options.groupMode,
      historyCacheBytes: options.historyCacheBytes,
    });
    this.ledger = new SqliteLedger(db);
    this.turns = new SqliteTurnJournal(db);
    this.outbox = new SqliteOutbox(db, { maxAttempts: options.outboxMaxAttempts });
    this.pairing = new SqlitePairing(db);
    this.usage = new SqliteUsageLedger(db);
    this.responses = new SqliteResponseStore(db);
    this.#kv = new SqliteKv(db);
    this.#tx = db.transaction((fn: () => unknown) => fn());
  }

  /**
   * Opens (creating if needed, with its directory) and migrates the database at `path`; `":memory:"`
   * gives a private in-memory one. Throws a `state_error` HeraldError naming the file when it cannot be
   * opened, is not a Herald database, or was written by a newer Herald.
   */
  static open(path: string, options: SqliteStateOptions = {}): SqliteState {
    let db: Database.Database | undefined;
    try {
      if (path !== ":memory:" && path !== "") mkdirSync(dirname(path), { recursive: true });
      db = new Database(path);
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
      db.pragma(`busy_timeout = ${Math.trunc(options.busyTimeoutMs ?? 5000)}`);
      db.pragma("temp_store = MEMORY");
      // Checkpoint the WAL every ~40 MB instead of every 4 MB: each checkpoint syncs the database file,
      // and at hundreds of turns a second the default made one turn in a hundred wait ~10 ms for it.
      db.pragma("wal_autocheckpoint = 10000");
      migrate(db);
      return new SqliteState(db, options);
    } catch (cause) {
      db?.close();
      if (cause instanceof HeraldError) throw cause;
      throw new HeraldError(
        `Cannot open the state database ${path}: ${cause instanceof Error ? cause.message : String(cause)}. ` +
          "Check that the file is a Herald state.db and that its directory is writable.",
        { code: "state_error", cause },
      );
    }
  }

  /** Durable key-value state of one adapter (or other part), apart from every other namespace. */
  kv(namespace: string): KeyValueStore {
    return this.#kv.namespace(namespace);
  }

  /**
   * Runs `fn` in one transaction across all members: everything it wrote commits together, or, if it
   * throws, nothing does and the error is rethrown. `fn` must be synchronous; nested calls are savepoints.
   * With group commit it is a savepoint of the open batch and is durable once the batch commits: effects
   * that need it durable go through `afterCommit`.
   */
  transaction<T>(fn: () => T): T {
    try {
      if (!this.#groupCommit) return this.#tx.immediate(fn) as T;
      this.#openBatch();
      return this.#tx(fn) as T;
    } catch (err) {
      // The rollback may have undone appends the history cache saw.
      this.sessions.forgetCachedHistories();
      // Some faults (disk full, I/O) make SQLite roll back the whole transaction, not just the savepoint:
      // the batch's earlier writes are gone too, and their effects must never run.
      if (this.#batch && !this.#db.inTransaction) this.#lose(err);
      throw err;
    }
  }

  /** Runs `effect` once everything written so far is committed: now, unless a batch is open. */
  afterCommit(effect: () => void): void {
    if (this.#batch) this.#batch.effects.push(effect);
    else effect();
  }

  /** Resolves once everything written so far is committed; rejects if that commit failed. */
  committed(): Promise<void> {
    const batch = this.#batch;
    if (!batch) return Promise.resolve();
    return new Promise((resolve, reject) => batch.waiters.push({ resolve, reject }));
  }

  /**
   * Commits the open batch now, then runs its `afterCommit` effects (each in order; one that throws does
   * not stop the rest, and the first error is rethrown after them). Does nothing without a batch.
   * @throws HeraldError `state_error` when the commit fails: the batch is rolled back and lost.
   */
  flush(): void {
    const batch = this.#batch;
    if (!batch) return;
    if (!this.#db.inTransaction) this.#lose(new Error("the transaction was rolled back"));
    this.#batch = undefined;
    try {
      this.#db.exec("COMMIT");
    } catch (cause) {
      if (this.#db.inTransaction) this.#db.exec("ROLLBACK");
      this.sessions.forgetCachedHistories();
      const err = commitError(cause);
      for (const waiter of batch.waiters) waiter.reject(err);
      throw err;
    }
    for (const waiter of batch.waiters) waiter.resolve();
    let first: unknown;
    for (const effect of batch.effects) {
      try {
        effect();
      } catch (err) {
        first ??= err;
      }
    }
    if (first !== undefined) throw first;
  }

  #openBatch(): void {
    if (this.#batch) return;
    this.#db.exec("BEGIN IMMEDIATE");
    this.#batch = { effects: [], waiters: [] };
    setImmediate(() => {
      if (this.#batch === undefined || !this.#db.open) return;
      try {
        this.flush();
      } catch (err) {
        // A failed commit propagates (the process cannot go on with writes it believes made); an effect
        // that threw is reported.
        if (err instanceof HeraldError && err.code === "state_error") throw err;
        this.#onEffectError(err);
      }
    });
  }

  /** The open batch was rolled back by SQLite: its effects are dropped and its waiters rejected. */
  #lose(cause: unknown): never {
    const batch = this.#batch;
    this.#batch = undefined;
    this.sessions.forgetCachedHistories();
    const err = commitError(cause);
    for (const waiter of batch?.waiters ?? []) waiter.reject(err);
    throw err;
  }

  /**
   * The connection, for stores of other parts that keep their tables in `state.db` (the scheduler's cron
   * store): their writes join this state's transactions and batches. They must not close it.
   */
  get database(): Database.Database {
    return this.#db;
  }

  /** Whether `close()` has not been called yet. */
  get isOpen(): boolean {
    return this.#db.open;
  }

  /** Commits any open batch and closes the database (checkpointing the WAL). Safe to call twice. */
  close(): void {
    if (!this.#db.open) return;
    try {
      this.flush();
    } finally {
      this.#db.close();
    }
  }
}

function commitError(cause: unknown): HeraldError {
  return new HeraldError(
    `Committing to the state database failed: ${cause instanceof Error ? cause.message : String(cause)}. ` +
      "The writes of that moment are lost; restart Herald (it resumes from what was committed) once the " +
      "disk has space and the file is writable.",
    { code: "state_error", cause },
  );
}
