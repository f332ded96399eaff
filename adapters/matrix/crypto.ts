/**
 * End-to-end encryption for the Matrix adapter (`MATRIX_ENCRYPTION=true`): matrix-js-sdk's Rust crypto
 * (`initRustCrypto`) on a crypto store that survives restarts and crashes. The store is IndexedDB
 * written through to one SQLite file per device (`idb-sqlite.ts`), under
 * `HERALD_HOME/matrix-crypto/<user>.<device>.sqlite`, so every start is the same device with the same
 * identity keys, Olm sessions and Megolm keys.
 *
 * The store's contents are encrypted with a key derived (scrypt, random salt kept in the file) from
 * `MATRIX_STORE_KEY` when it is set; a check value in the file catches a changed or missing key before
 * the crypto machine opens it. Without `MATRIX_STORE_KEY` the store is not encrypted at rest and is
 * protected by its file mode (0600) only, like the access token in Herald's state.
 *
 * This module, fake-indexeddb, better-sqlite3's file and the crypto WASM load only when encryption is
 * enabled: an unencrypted setup pays nothing for them.
 */
import { createHmac, randomBytes, scryptSync } from "node:crypto";
import { chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import * as fakeIdb from "fake-indexeddb";
import type { MatrixClient } from "matrix-js-sdk";
import { PlatformError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import { openSqliteIndexedDb, type SqliteIndexedDb } from "./idb-sqlite.js";

/** What `startCrypto` needs. */
export interface CryptoOptions {
  homeDir: string;
  userId: string;
  deviceId: string | undefined;
  /** `MATRIX_STORE_KEY`: a passphrase the store key is derived from. Never logged. */
  storeKey?: string | undefined;
  log: Logger;
}

/** A running crypto store; `close()` after the client stopped. */
export interface MatrixCrypto {
  /** Where the store lives. */
  path: string;
  close(): void;
}

const CHECK_LABEL = "herald-matrix-store-key-check";

/** The store file for one device: ids made safe as file names. */
export function cryptoStorePath(homeDir: string, userId: string, deviceId: string): string {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9._=-]/g, "_");
  return join(homeDir, "matrix-crypto", `${safe(userId)}.${safe(deviceId)}.sqlite`);
}

/**
 * The 32-byte store key from `MATRIX_STORE_KEY`, checked against the one the store was created with.
 * @throws PlatformError when the key is missing, new or different for an existing store.
 */
function storeKeyFor(
  idb: SqliteIndexedDb,
  path: string,
  passphrase: string | undefined,
): Uint8Array | undefined {
  const check = idb.getMeta("key_check");
  const hasData = idb.getMeta("created") !== undefined;
  const fix = `Fix: set MATRIX_STORE_KEY to the value the store was created with, or delete ${path} and log the bot's device out (a new device; people will see it as new).`;
  if (!passphrase) {
    if (check)
      throw new PlatformError(
        "matrix",
        `The Matrix crypto store ${path} is encrypted but MATRIX_STORE_KEY is not set. ${fix}`,
      );
    if (!hasData) idb.setMeta("created", new Date().toISOString());
    return undefined;
  }
  if (hasData && !check) {
    throw new PlatformError(
      "matrix",
      `The Matrix crypto store ${path} was created without MATRIX_STORE_KEY, which is now set. ${fix}`,
    );
  }
  let salt = idb.getMeta("key_salt");
  if (!salt) {
    salt = randomBytes(16).toString("base64");
    idb.setMeta("key_salt", salt);
  }
  const key = scryptSync(passphrase, Buffer.from(salt, "base64"), 32, {
    N: 2 ** 15,
    r: 8,
    p: 1,
    maxmem: 64 * 1024 * 1024,
  });
  const value = createHmac("sha256", key).update(CHECK_LABEL).digest("base64");
  if (check && check !== value) {
    throw new PlatformError(
      "matrix",
      `MATRIX_STORE_KEY does not open the Matrix crypto store ${path}. ${fix}`,
    );
  }
  if (!check) {
    idb.setMeta("key_check", value);
    idb.setMeta("created", new Date().toISOString());
  }
  return new Uint8Array(key);
}

/** Points the IndexedDB globals the crypto WASM uses at `idb`'s factory. */
function installGlobals(idb: SqliteIndexedDb): void {
  const g = globalThis as Record<string, unknown>;
  g["indexedDB"] = idb.factory;
  const classes: Record<string, unknown> = {
    IDBCursor: fakeIdb.IDBCursor,
    IDBCursorWithValue: fakeIdb.IDBCursorWithValue,
    IDBDatabase: fakeIdb.IDBDatabase,
    IDBFactory: fakeIdb.IDBFactory,
    IDBIndex: fakeIdb.IDBIndex,
    IDBKeyRange: fakeIdb.IDBKeyRange,
    IDBObjectStore: fakeIdb.IDBObjectStore,
    IDBOpenDBRequest: fakeIdb.IDBOpenDBRequest,
    IDBRequest: fakeIdb.IDBRequest,
    IDBTransaction: fakeIdb.IDBTransaction,
    IDBVersionChangeEvent: fakeIdb.IDBVersionChangeEvent,
  };
  for (const [name, value] of Object.entries(classes)) g[name] = value;
}

/**
 * Runs `init` with the Rust crypto's console tracing kept out of stdout: matrix-js-sdk turns it on at
 * debug level on every `initRustCrypto`, and the WASM writes straight to `console`. During the call
 * `console.debug`/`info` go to `log` at debug; afterwards the tracing level is lowered to errors.
 */
async function quietly(log: Logger, init: () => Promise<void>): Promise<void> {
  const { debug, info } = console;
  const toLog = (...args: unknown[]) =>
    log.debug({ detail: String(args[0]).slice(0, 2000) }, "matrix crypto log");
  console.debug = toLog;
  console.info = toLog;
  try {
    await init();
  } finally {
    console.debug = debug;
    console.info = info;
  }
  // matrix-js-sdk's own dependency; loaded by `initRustCrypto` already.
  const wasm = await import("@matrix-org/matrix-sdk-crypto-wasm");
  new wasm.Tracing(wasm.LoggerLevel.Error).turnOn();
}

/**
 * Opens the device's crypto store and starts Rust crypto on `client` (before `startClient`).
 * @throws PlatformError naming the setting to fix (no device id, wrong MATRIX_STORE_KEY, unreadable store).
 */
export async function startCrypto(client: MatrixClient, options: CryptoOptions): Promise<MatrixCrypto> {
  const { homeDir, userId, deviceId, log } = options;
  if (!deviceId) {
    throw new PlatformError(
      "matrix",
      "MATRIX_ENCRYPTION needs the bot's device id, and the homeserver's whoami returned none for MATRIX_ACCESS_TOKEN. Fix: use MATRIX_USER_ID + MATRIX_PASSWORD (Herald keeps its device), or a token issued for one device.",
    );
  }
  const path = cryptoStorePath(homeDir, userId, deviceId);
  mkdirSync(join(homeDir, "matrix-crypto"), { recursive: true, mode: 0o700 });
  const startedAt = Date.now();
  const idb = await openSqliteIndexedDb(path);
  try {
    chmodSync(path, 0o600);
    idb.onWriteError = (err) =>
      log.error({ err: err.message, path }, "matrix crypto store write failed; transaction aborted");
    const storageKey = storeKeyFor(idb, path, options.storeKey);
    installGlobals(idb);
    await quietly(log, () =>
      client.initRustCrypto({ useIndexedDB: true, ...(storageKey ? { storageKey } : {}) }),
    );
    const keys = await client.getCrypto()?.getOwnDeviceKeys();
    log.info(
      { deviceId, ed25519: keys?.ed25519, storeEncrypted: Boolean(storageKey), ms: Date.now() - startedAt },
      "matrix end-to-end encryption ready",
    );
  } catch (err) {
    idb.close();
    if (err instanceof PlatformError) throw err;
    throw new PlatformError(
      "matrix",
      `Matrix encryption could not start on the crypto store ${path}: ${(err as Error).message}. Fix: check MATRIX_STORE_KEY; if the store is damaged, delete it and log the bot's device out (people will see a new device).`,
      { cause: err },
    );
  }
  return { path, close: () => idb.close() };
}
