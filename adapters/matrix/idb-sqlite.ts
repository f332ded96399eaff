/**
 * An IndexedDB that survives restarts and crashes, for matrix-js-sdk's Rust crypto store: fake-indexeddb
 * serves the IndexedDB API in memory, and every transaction it commits is written through to SQLite
 * (better-sqlite3, WAL, `synchronous = FULL`) in one SQLite transaction *before* its `complete` event
 * fires. The crypto machine therefore learns that a write committed only once it is on disk; a crash
 * loses at most transactions that had not completed, exactly as a browser's IndexedDB would.
 *
 * How the writes are seen: fake-indexeddb passes every record mutation of a transaction (`put`, `add`,
 * `delete`, `clear`, cursor `update`/`delete`) to its object store's `storeRecord` / `deleteRecord` /
 * `clear` together with that transaction's rollback log. Those three methods and the transaction's
 * `_abort` / `_markFinished` are wrapped (once per process, on the shared prototypes), so each
 * transaction on a persisted factory collects the keys it touched; at commit the final value of each is
 * copied to SQLite, an abort drops the list. If the SQLite write fails, the transaction is aborted
 * instead of completed, so the caller sees an error, never a false commit. Schema (stores, indexes,
 * version) is saved when an upgrade transaction commits. These are fake-indexeddb internals: the version
 * is pinned, and `openSqliteIndexedDb` checks the hooks exist before anything relies on them.
 *
 * On start every saved database is rebuilt in memory through the public API (one upgrade transaction
 * that creates the stores and indexes and puts the records back).
 */
import { deserialize, serialize } from "node:v8";
import Database from "better-sqlite3";
import { IDBFactory, IDBKeyRange, IDBTransaction } from "fake-indexeddb";

/** fake-indexeddb's in-memory object store (internal). */
interface RawStore {
  name: string;
  keyPath: string | string[] | null;
  autoIncrement: boolean;
  rawDatabase: RawDatabase;
  rawIndexes: Map<string, { name: string; keyPath: string | string[]; multiEntry: boolean; unique: boolean }>;
  records: {
    get(key: unknown): { key: unknown; value: unknown } | undefined;
    values(range?: unknown): Iterable<{ key: unknown; value: unknown }>;
  };
}
interface RawDatabase {
  name: string;
  version: number;
  rawObjectStores: Map<string, RawStore>;
}
/** fake-indexeddb's transaction (internal members used here). */
interface RawTransaction {
  mode: string;
  _rollbackLog: unknown[];
  db: { _rawDatabase: RawDatabase };
}

type Op =
  | { kind: "put"; store: RawStore; key: unknown }
  | { kind: "delete"; store: RawStore; keys: unknown[] }
  | { kind: "clear"; store: RawStore };

interface Journal {
  owner: SqliteIndexedDb;
  ops: Op[];
  aborted: boolean;
}

interface SavedSchema {
  stores: {
    name: string;
    keyPath: string | string[] | null;
    autoIncrement: boolean;
    indexes: { name: string; keyPath: string | string[]; multiEntry: boolean; unique: boolean }[];
  }[];
}

const journals = new WeakMap<unknown[], Journal>();
const owners = new Set<SqliteIndexedDb>();
let hooked = false;

function ownerOf(db: RawDatabase): SqliteIndexedDb | undefined {
  for (const owner of owners) if (owner.owns(db)) return owner;
  return undefined;
}

function journalFor(store: RawStore, log: unknown[] | undefined): Journal | undefined {
  if (!log) return undefined; // a rollback replaying old records: not a new write
  const existing = journals.get(log);
  if (existing) return existing;
  const owner = ownerOf(store.rawDatabase);
  if (!owner || owner.loading) return undefined;
  const journal: Journal = { owner, ops: [], aborted: false };
  journals.set(log, journal);
  return journal;
}

const range = (key: unknown) => (key instanceof IDBKeyRange ? key : IDBKeyRange.only(key));

/** Wraps fake-indexeddb's record mutations and transaction end once per process. */
async function installHooks(): Promise<void> {
  if (hooked) return;
  const storeProto = await rawStorePrototype();
  const txProto = IDBTransaction.prototype as unknown as Record<string, unknown>;
  const needed = [storeProto.storeRecord, storeProto.deleteRecord, storeProto.clear, txProto._abort];
  if (needed.some((f) => typeof f !== "function") || typeof txProto._markFinished !== "function") {
    throw new Error(
      "fake-indexeddb's internals changed: the Matrix crypto store cannot write through. Install the version package.json pins.",
    );
  }
  type Fn = (this: RawStore, ...args: unknown[]) => unknown;
  const storeRecord = storeProto.storeRecord as Fn;
  const deleteRecord = storeProto.deleteRecord as Fn;
  const clear = storeProto.clear as Fn;
  storeProto.storeRecord = function (this: RawStore, record: unknown, noOverwrite: unknown, log?: unknown[]) {
    const key = storeRecord.call(this, record, noOverwrite, log);
    journalFor(this, log)?.ops.push({ kind: "put", store: this, key });
    return key;
  };
  storeProto.deleteRecord = function (this: RawStore, key: unknown, log?: unknown[]) {
    const journal = journalFor(this, log);
    const keys = journal ? [...this.records.values(range(key))].map((r) => r.key) : [];
    deleteRecord.call(this, key, log);
    journal?.ops.push({ kind: "delete", store: this, keys });
  };
  storeProto.clear = function (this: RawStore, log?: unknown[]) {
    clear.call(this, log);
    journalFor(this, log)?.ops.push({ kind: "clear", store: this });
  };
  type TxFn = (this: RawTransaction, ...args: unknown[]) => unknown;
  const abort = txProto._abort as TxFn;
  const markFinished = txProto._markFinished as TxFn;
  const aborted = new WeakSet<RawTransaction>();
  txProto._abort = function (this: RawTransaction, ...args: unknown[]) {
    aborted.add(this);
    const journal = journals.get(this._rollbackLog);
    if (journal) journal.aborted = true;
    return abort.apply(this, args);
  };
  txProto._markFinished = function (this: RawTransaction) {
    if (!aborted.has(this)) {
      const journal = journals.get(this._rollbackLog);
      const upgrade = this.mode === "versionchange" ? this.db._rawDatabase : undefined;
      const owner = journal?.owner ?? (upgrade ? ownerOf(upgrade) : undefined);
      if (owner && !owner.loading) {
        try {
          owner.commit(journal?.ops ?? [], upgrade);
        } catch (err) {
          // Not on disk, so not committed: abort (rolls back memory, fires `abort`, no `complete`).
          owner.onWriteError(err as Error);
          return (this as unknown as { _abort(name: string): unknown })._abort("UnknownError");
        }
      }
    }
    return markFinished.call(this);
  };
  hooked = true;
}

/** The prototype of fake-indexeddb's internal object store, taken from a throwaway database. */
async function rawStorePrototype(): Promise<Record<string, unknown>> {
  const factory = new IDBFactory();
  return new Promise((resolve, reject) => {
    const req = factory.open("probe", 1);
    req.onupgradeneeded = () => {
      const store = req.result.createObjectStore("probe") as unknown as { _rawObjectStore?: object };
      const proto = store._rawObjectStore ? Object.getPrototypeOf(store._rawObjectStore) : undefined;
      if (proto) resolve(proto as Record<string, unknown>);
      else reject(new Error("fake-indexeddb's internals changed: no raw object store"));
    };
    req.onerror = () => reject(req.error);
  });
}

/** An IndexedDB factory whose databases live in one SQLite file. Build it with `openSqliteIndexedDb`. */
export class SqliteIndexedDb {
  /** The IndexedDB factory to hand to the code that uses IndexedDB. */
  readonly factory = new IDBFactory();
  /** True while saved databases are being rebuilt (those writes are not written back). */
  loading = false;
  /** Called when a commit could not be written (the transaction was aborted). */
  onWriteError: (err: Error) => void = () => undefined;
  private readonly statements;

  constructor(private readonly sqlite: Database.Database) {
    sqlite.exec(`
      CREATE TABLE IF NOT EXISTS idb_databases (name TEXT PRIMARY KEY, version INTEGER NOT NULL, schema TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS idb_records (db TEXT NOT NULL, store TEXT NOT NULL, key BLOB NOT NULL, value BLOB NOT NULL,
        PRIMARY KEY (db, store, key)) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);`);
    this.statements = {
      put: sqlite.prepare("INSERT OR REPLACE INTO idb_records (db, store, key, value) VALUES (?, ?, ?, ?)"),
      del: sqlite.prepare("DELETE FROM idb_records WHERE db = ? AND store = ? AND key = ?"),
      clear: sqlite.prepare("DELETE FROM idb_records WHERE db = ? AND store = ?"),
      saveDb: sqlite.prepare("INSERT OR REPLACE INTO idb_databases (name, version, schema) VALUES (?, ?, ?)"),
      dropDb: sqlite.prepare("DELETE FROM idb_databases WHERE name = ?"),
      dropRecords: sqlite.prepare("DELETE FROM idb_records WHERE db = ?"),
      stores: sqlite.prepare("SELECT DISTINCT store FROM idb_records WHERE db = ?").pluck(),
    };
    this.hookDeleteDatabase();
  }

  /** Whether `db` is one of this factory's databases. */
  owns(db: RawDatabase): boolean {
    return (
      (this.factory as unknown as { _databases: Map<string, RawDatabase> })._databases.get(db.name) === db
    );
  }

  /** Writes one committed transaction (and, for an upgrade, the schema) in one SQLite transaction. */
  commit(ops: Op[], upgraded: RawDatabase | undefined): void {
    const s = this.statements;
    this.sqlite.transaction(() => {
      for (const op of ops) {
        const db = op.store.rawDatabase.name;
        if (op.kind === "clear") s.clear.run(db, op.store.name);
        else if (op.kind === "delete") for (const k of op.keys) s.del.run(db, op.store.name, serialize(k));
        else {
          const record = op.store.records.get(op.key);
          // Gone again later in the same transaction: its delete op follows.
          if (record) s.put.run(db, op.store.name, serialize(record.key), serialize(record.value));
        }
      }
      if (upgraded) this.saveSchema(upgraded);
    })();
  }

  private saveSchema(db: RawDatabase): void {
    const schema: SavedSchema = { stores: [] };
    for (const store of db.rawObjectStores.values()) {
      schema.stores.push({
        name: store.name,
        keyPath: store.keyPath,
        autoIncrement: store.autoIncrement,
        indexes: [...store.rawIndexes.values()].map((i) => ({
          name: i.name,
          keyPath: i.keyPath,
          multiEntry: i.multiEntry,
          unique: i.unique,
        })),
      });
    }
    this.statements.saveDb.run(db.name, db.version, JSON.stringify(schema));
    const kept = new Set(db.rawObjectStores.keys());
    for (const store of this.statements.stores.all(db.name) as string[]) {
      if (!kept.has(store)) this.statements.clear.run(db.name, store);
    }
  }

  /** Rebuilds every saved database in memory. */
  async load(): Promise<void> {
    const rows = this.sqlite.prepare("SELECT name, version, schema FROM idb_databases").all() as {
      name: string;
      version: number;
      schema: string;
    }[];
    this.loading = true;
    try {
      for (const row of rows)
        await this.rebuild(row.name, row.version, JSON.parse(row.schema) as SavedSchema);
    } finally {
      this.loading = false;
    }
  }

  private rebuild(name: string, version: number, schema: SavedSchema): Promise<void> {
    const records = this.sqlite.prepare("SELECT key, value FROM idb_records WHERE db = ? AND store = ?");
    return new Promise((resolve, reject) => {
      const req = this.factory.open(name, version);
      req.onupgradeneeded = () => {
        const db = req.result;
        for (const spec of schema.stores) {
          const store = db.createObjectStore(spec.name, {
            keyPath: spec.keyPath,
            autoIncrement: spec.autoIncrement,
          });
          for (const i of spec.indexes) store.createIndex(i.name, i.keyPath, i);
          for (const row of records.iterate(name, spec.name) as Iterable<{ key: Buffer; value: Buffer }>) {
            const value = deserialize(row.value) as unknown;
            if (spec.keyPath === null) store.put(value, deserialize(row.key) as IDBValidKey);
            else store.put(value);
          }
        }
      };
      req.onsuccess = () => {
        req.result.close();
        resolve();
      };
      req.onerror = () => reject(req.error ?? new Error(`rebuilding IndexedDB ${name} failed`));
    });
  }

  /** `factory.deleteDatabase` also deletes the database from disk once it succeeded in memory. */
  private hookDeleteDatabase(): void {
    const original = this.factory.deleteDatabase.bind(this.factory);
    this.factory.deleteDatabase = (name: string) => {
      const req = original(name);
      req.addEventListener("success", () => {
        if (!this.sqlite.open) return;
        this.sqlite.transaction(() => {
          this.statements.dropDb.run(name);
          this.statements.dropRecords.run(name);
        })();
      });
      return req;
    };
  }

  /** A small setting kept beside the databases (key salt, key check). */
  getMeta(key: string): string | undefined {
    const row = this.sqlite.prepare("SELECT value FROM meta WHERE key = ?").get(key) as
      | { value: string }
      | undefined;
    return row?.value;
  }

  setMeta(key: string, value: string): void {
    this.sqlite.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)").run(key, value);
  }

  /** Stops writing through and closes the file. Transactions still running after this are not kept. */
  close(): void {
    owners.delete(this);
    if (this.sqlite.open) this.sqlite.close();
  }

  /** Registers this factory for write-through (after `load`). */
  activate(): void {
    owners.add(this);
  }
}

/**
 * Opens (creating if needed) the SQLite file at `path` and rebuilds its databases in memory.
 * @throws when the file cannot be opened or fake-indexeddb lacks the hooks this relies on.
 */
export async function openSqliteIndexedDb(path: string): Promise<SqliteIndexedDb> {
  await installHooks();
  const sqlite = new Database(path);
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("synchronous = FULL");
  const idb = new SqliteIndexedDb(sqlite);
  try {
    idb.activate();
    await idb.load();
  } catch (err) {
    idb.close();
    throw err;
  }
  return idb;
}
