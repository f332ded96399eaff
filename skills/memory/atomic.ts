/**
 * Safe file writes for state kept as plain files (memory, skills): a write goes to a temp file in the
 * same folder and is renamed over the target (readers see the old or the new file, never half of one),
 * and writers of one path take turns: in this process through a promise chain, across processes
 * (`herald skills install` beside a running gateway) through an exclusive lock file.
 */
import { randomBytes } from "node:crypto";
import { mkdir, open, rename, rm, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { HeraldError } from "../../core/errors.js";

/** Writes `data` to `path` through a temp file and a rename; creates the folder. */
export async function writeFileAtomic(path: string, data: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  const handle = await open(temp, "w", 0o600);
  try {
    await handle.writeFile(data, "utf8");
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}

const chains = new Map<string, Promise<unknown>>();

/** A lock file older than this belongs to a process that died holding it. */
const STALE_LOCK_MS = 30_000;

/**
 * Runs `fn` while holding the lock of `path` (one writer at a time, in this process and across
 * processes). `fn` may throw; the lock is released either way and the error passes through.
 * @throws HeraldError `state_error` when another process holds the lock for longer than `timeoutMs`.
 */
export function withFileLock<T>(path: string, fn: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  const previous = chains.get(path) ?? Promise.resolve();
  const run = previous.catch(() => undefined).then(() => withLockFile(path, fn, timeoutMs));
  const tail = run.catch(() => undefined);
  chains.set(path, tail);
  // Forget the chain once it is idle, so the map does not grow with every path ever written.
  void tail.then(() => {
    if (chains.get(path) === tail) chains.delete(path);
  });
  return run;
}

async function withLockFile<T>(path: string, fn: () => Promise<T>, timeoutMs: number): Promise<T> {
  const lockPath = `${path}.lock`;
  await mkdir(dirname(lockPath), { recursive: true });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const handle = await open(lockPath, "wx");
      await handle.writeFile(String(process.pid));
      await handle.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const age = await stat(lockPath).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      if (age > STALE_LOCK_MS) {
        await rm(lockPath, { force: true });
        continue;
      }
      if (Date.now() > deadline) {
        throw new HeraldError(
          `${lockPath} has been held by another process for over ${Math.round(timeoutMs / 1000)} s. If no other herald process is running, delete that file.`,
          { code: "state_error", retryable: true },
        );
      }
      await sleep(20);
    }
  }
  try {
    return await fn();
  } finally {
    await rm(lockPath, { force: true });
  }
}
