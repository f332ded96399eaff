import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { HeraldError } from "../gateway/errors.js";
import { migrate } from "./migrations.js";
import { SqliteKv } from "./sqlite-kv.js";
import { SqliteLedger } from "./sqlite-ledger.js";
import { SqliteOutbox } from "./sqlite-outbox.js";
import { SqlitePairing } from "./sqlite-pairing.js";
import { SqliteSessionStore } from "./sqlite-session-store.js";
import { SqliteTurnJournal } from "./sqlite-turn-journal.js";
import type { GroupSessionMode, KeyValueStore } from "./types.js";

/** Options of `SqliteState.open`. */
export interface SqliteStateOptions {
  /** How long a write waits for another process's lock before failing. @defaultValue 5000 */
  busyTimeoutMs?: number | undefined;
  /** How `sessions.open` keys group chats. @defaultValue "per_user" */
  groupMode?: GroupSessionMode | undefined;
  /** Failed delivery attempts after which an outbox item is marked failed. @defaultValue 10 */
  outboxMaxAttempts?: number | undefined;
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
  readonly #db: Database.Database;
  readonly #kv: SqliteKv;
  readonly #tx: Database.Transaction<(fn: () => unknown) => unknown>;

  private constructor(db: Database.Database, options: SqliteStateOptions) {
    this.#db = db;
    this.sessions = new SqliteSessionStore(db, { groupMode: options.groupMode });
    this.ledger = new SqliteLedger(db);
    this.turns = new SqliteTurnJournal(db);
    this.outbox = new SqliteOutbox(db, { maxAttempts: options.outboxMaxAttempts });
    this.pairing = new SqlitePairing(db);
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
   */
  transaction<T>(fn: () => T): T {
    return this.#tx.immediate(fn) as T;
  }

  /** Whether `close()` has not been called yet. */
  get isOpen(): boolean {
    return this.#db.open;
  }

  /** Closes the database (checkpointing the WAL). Safe to call twice. */
  close(): void {
    if (this.#db.open) this.#db.close();
  }
}
