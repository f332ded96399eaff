import type Database from "better-sqlite3";
import type { KeyValueStore } from "../core/types.js";

/** The `kv` table; `namespace(name)` gives one adapter's view of it. */
export class SqliteKv {
  readonly #stmt;
  readonly #views = new Map<string, KeyValueStore>();

  constructor(db: Database.Database) {
    this.#stmt = {
      get: db.prepare<[string, string], { value: string }>(
        "SELECT value FROM kv WHERE namespace = ? AND key = ?",
      ),
      set: db.prepare<[string, string, string]>(
        "INSERT INTO kv (namespace, key, value) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET value = excluded.value",
      ),
      delete: db.prepare<[string, string]>("DELETE FROM kv WHERE namespace = ? AND key = ?"),
    };
  }

  /** A `KeyValueStore` whose keys live apart from every other namespace's. */
  namespace(name: string): KeyValueStore {
    let view = this.#views.get(name);
    if (!view) {
      const stmt = this.#stmt;
      view = {
        get: (key) => stmt.get.get(name, key)?.value,
        set: (key, value) => void stmt.set.run(name, key, value),
        // Read first: a delete of an absent key outside a transaction would still be a write
        // transaction of its own (a turn's end clears keys that are almost always absent).
        delete: (key) => {
          if (stmt.get.get(name, key) !== undefined) stmt.delete.run(name, key);
        },
      };
      this.#views.set(name, view);
    }
    return view;
  }
}
