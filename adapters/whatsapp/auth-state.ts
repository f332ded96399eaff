/**
 * Baileys auth state (credentials + Signal keys) as files under `HERALD_HOME/whatsapp/`: `creds.json`
 * and one file per key in `keys/`. Every write goes to a temporary file that is flushed and renamed over
 * the old one, so a crash leaves either the old or the new content, never a torn file. Writes to one file
 * are serialised, so the last write wins in call order. Files are readable by the owner only.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, readdir, readFile, rename, rm, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type AuthenticationCreds,
  type AuthenticationState,
  BufferJSON,
  initAuthCreds,
  proto,
  type SignalDataSet,
  type SignalDataTypeMap,
} from "@whiskeysockets/baileys";

/** An auth state bound to a folder. */
export interface FileAuthState {
  readonly dir: string;
  /** Pass to the socket factory. `creds` is mutated by Baileys; `saveCreds` persists it. */
  readonly state: AuthenticationState;
  /** Merges a `creds.update` and writes `creds.json`. */
  saveCreds(update?: Partial<AuthenticationCreds>): Promise<void>;
  /** Waits for every write in flight. */
  flush(): Promise<void>;
  /** Deletes every file (after logout); later writes are dropped. */
  clear(): Promise<void>;
}

const CREDS_FILE = "creds.json";
const KEYS_DIR = "keys";

/** The file of one key: the id is URI-encoded so every id maps to one safe, distinct file name. */
const keyFile = (type: string, id: string) => `${type}-${encodeURIComponent(id)}.json`;

/** Whether `dir` holds credentials of a linked device (a previous pairing completed). */
export function hasLinkedCreds(dir: string): boolean {
  const path = join(dir, CREDS_FILE);
  if (!existsSync(path)) return false;
  try {
    const creds = JSON.parse(readFileSync(path, "utf8"), BufferJSON.reviver) as Partial<AuthenticationCreds>;
    return Boolean(creds.me?.id);
  } catch {
    return false;
  }
}

/** Deletes the credentials folder (unlink). Safe when it does not exist. */
export async function deleteAuthDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/**
 * Opens (or creates) the auth state in `dir`. A missing or unreadable `creds.json` gives fresh
 * credentials (`initAuthCreds()`): the next connection shows a QR code.
 */
export async function openFileAuthState(dir: string): Promise<FileAuthState> {
  await mkdir(join(dir, KEYS_DIR), { recursive: true, mode: 0o700 });
  const chains = new Map<string, Promise<void>>();
  let cleared = false;

  const enqueue = (path: string, work: () => Promise<void>): Promise<void> => {
    const previous = chains.get(path) ?? Promise.resolve();
    const next = previous.then(work, work);
    chains.set(path, next);
    void next.finally(() => {
      if (chains.get(path) === next) chains.delete(path);
    });
    return next;
  };

  const write = (path: string, value: unknown) =>
    enqueue(path, async () => {
      if (cleared) return;
      const tmp = `${path}.${randomBytes(6).toString("hex")}.tmp`;
      await writeFile(tmp, JSON.stringify(value, BufferJSON.replacer), { mode: 0o600, flush: true });
      await rename(tmp, path);
    });

  const remove = (path: string) =>
    enqueue(path, async () => {
      if (cleared) return;
      await unlink(path).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== "ENOENT") throw err;
      });
    });

  const read = async (path: string): Promise<unknown> => {
    await chains.get(path);
    try {
      return JSON.parse(await readFile(path, "utf8"), BufferJSON.reviver);
    } catch {
      return null;
    }
  };

  const credsPath = join(dir, CREDS_FILE);
  const creds = ((await read(credsPath)) as AuthenticationCreds | null) ?? initAuthCreds();
  await removeStaleTemps(dir);

  const state: AuthenticationState = {
    creds,
    keys: {
      async get<T extends keyof SignalDataTypeMap>(type: T, ids: string[]) {
        const out: { [id: string]: SignalDataTypeMap[T] } = {};
        await Promise.all(
          ids.map(async (id) => {
            let value = await read(join(dir, KEYS_DIR, keyFile(type, id)));
            if (value && type === "app-state-sync-key") {
              value = proto.Message.AppStateSyncKeyData.fromObject(value as object);
            }
            if (value) out[id] = value as SignalDataTypeMap[T];
          }),
        );
        return out;
      },
      async set(data: SignalDataSet) {
        const tasks: Promise<void>[] = [];
        for (const [type, entries] of Object.entries(data)) {
          for (const [id, value] of Object.entries(entries ?? {})) {
            const path = join(dir, KEYS_DIR, keyFile(type, id));
            tasks.push(value ? write(path, value) : remove(path));
          }
        }
        await Promise.all(tasks);
      },
    },
  };

  return {
    dir,
    state,
    saveCreds(update) {
      if (update) Object.assign(creds, update);
      return write(credsPath, creds);
    },
    async flush() {
      while (chains.size > 0) await Promise.allSettled([...chains.values()]);
    },
    async clear() {
      cleared = true;
      while (chains.size > 0) await Promise.allSettled([...chains.values()]);
      await deleteAuthDir(dir);
    },
  };
}

/** Temporary files left by a crash between write and rename. */
async function removeStaleTemps(dir: string): Promise<void> {
  for (const folder of [dir, join(dir, KEYS_DIR)]) {
    const names = await readdir(folder).catch(() => [] as string[]);
    await Promise.all(
      names.filter((n) => n.endsWith(".tmp")).map((n) => unlink(join(folder, n)).catch(() => undefined)),
    );
  }
}
