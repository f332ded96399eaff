/**
 * The write-through IndexedDB behind the Matrix crypto store: what a committed transaction wrote is on
 * disk before `complete` (a new process sees it without any close or snapshot), an aborted one leaves
 * nothing, deletes by range and clears reach the disk, and schema upgrades are kept.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IDBKeyRange } from "fake-indexeddb";
import { afterEach, describe, expect, it } from "vitest";
import { openSqliteIndexedDb, type SqliteIndexedDb } from "../../adapters/matrix/idb-sqlite.js";

const dirs: string[] = [];
const opened: SqliteIndexedDb[] = [];
afterEach(() => {
  for (const idb of opened.splice(0)) idb.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempFile(): string {
  const dir = mkdtempSync(join(tmpdir(), "herald-idb-"));
  dirs.push(dir);
  return join(dir, "crypto.sqlite");
}

async function open(path: string): Promise<SqliteIndexedDb> {
  const idb = await openSqliteIndexedDb(path);
  opened.push(idb);
  return idb;
}

const done = (req: IDBRequest | IDBTransaction) =>
  new Promise<void>((resolve, reject) => {
    if ("oncomplete" in req) {
      req.oncomplete = () => resolve();
      req.onabort = () => reject(req.error ?? new Error("aborted"));
    } else {
      req.onsuccess = () => resolve();
      req.onerror = () => reject(req.error);
    }
  });

function openDb(idb: SqliteIndexedDb, version = 1, upgrade?: (db: IDBDatabase) => void) {
  return new Promise<IDBDatabase>((resolve, reject) => {
    const req = idb.factory.open("app", version);
    req.onupgradeneeded = () => upgrade?.(req.result);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

const schemaV1 = (db: IDBDatabase) => {
  const s = db.createObjectStore("sessions", { keyPath: "id" });
  s.createIndex("by_room", "room", { unique: false });
  db.createObjectStore("core");
};

async function all(db: IDBDatabase, store: string): Promise<unknown[]> {
  const req = db.transaction(store).objectStore(store).getAll();
  await done(req);
  return req.result as unknown[];
}

describe("SQLite-backed IndexedDB for the Matrix crypto store", () => {
  it("keeps each committed transaction without a close, and drops an aborted one", async () => {
    const path = tempFile();
    const first = await open(path);
    const db = await openDb(first, 1, schemaV1);
    const tx = db.transaction(["sessions", "core"], "readwrite");
    tx.objectStore("sessions").put({ id: "s1", room: "!a", key: new Uint8Array([1, 2, 3]) });
    tx.objectStore("core").put({ account: "pickled" }, ["account", 1]);
    await done(tx);
    const bad = db.transaction("sessions", "readwrite");
    bad.objectStore("sessions").put({ id: "s2", room: "!a" });
    bad.abort();
    await expect(done(bad)).rejects.toBeDefined();
    // No close: the next process opens the same file as after a kill.
    const second = await open(path);
    const again = await openDb(second, 1, () => {
      throw new Error("the saved schema should make an upgrade unnecessary");
    });
    expect(await all(again, "sessions")).toEqual([{ id: "s1", room: "!a", key: new Uint8Array([1, 2, 3]) }]);
    const req = again.transaction("core").objectStore("core").get(["account", 1]);
    await done(req);
    expect(req.result).toEqual({ account: "pickled" });
    const byRoom = again.transaction("sessions").objectStore("sessions").index("by_room").count("!a");
    await done(byRoom);
    expect(byRoom.result).toBe(1);
  });

  it("writes deletes by key range, clears and later upgrades through", async () => {
    const path = tempFile();
    const first = await open(path);
    let db = await openDb(first, 1, schemaV1);
    const tx = db.transaction(["sessions", "core"], "readwrite");
    for (const id of ["a", "b", "c", "d"]) tx.objectStore("sessions").put({ id, room: "!r" });
    tx.objectStore("core").put("x", "k1");
    await done(tx);
    const del = db.transaction(["sessions", "core"], "readwrite");
    del.objectStore("sessions").delete(IDBKeyRange.bound("b", "c"));
    del.objectStore("core").clear();
    await done(del);
    db.close();
    db = await openDb(first, 2, (d) => {
      d.deleteObjectStore("core");
      d.createObjectStore("olm_hashes", { autoIncrement: true });
    });
    const add = db.transaction("olm_hashes", "readwrite");
    add.objectStore("olm_hashes").add({ hash: "h1" });
    await done(add);

    const second = await open(path);
    const again = await openDb(second, 2);
    expect(await all(again, "sessions")).toEqual([
      { id: "a", room: "!r" },
      { id: "d", room: "!r" },
    ]);
    expect([...again.objectStoreNames]).toEqual(["olm_hashes", "sessions"]);
    expect(await all(again, "olm_hashes")).toEqual([{ hash: "h1" }]);
  });

  it("deleting a database removes it from disk", async () => {
    const path = tempFile();
    const first = await open(path);
    const db = await openDb(first, 1, schemaV1);
    const tx = db.transaction("core", "readwrite");
    tx.objectStore("core").put("x", "k1");
    await done(tx);
    db.close();
    await done(first.factory.deleteDatabase("app"));
    const second = await open(path);
    const fresh = await openDb(second, 1, schemaV1);
    expect(await all(fresh, "core")).toEqual([]);
  });
});
