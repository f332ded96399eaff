/**
 * The record of each workspace's cloud sandbox: which provider and id, when it was made, and how long
 * it has run. One small JSON file per workspace beside the workspaces (`<root>/.sandboxes/<name>.json`,
 * out of reach of commands, which run in the cloud), so a restarted gateway or another worker sharing
 * HERALD_HOME resumes the same sandbox, and `/usage` reads its running time.
 */
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { CloudProviderName } from "./cloud-types.js";

/** One workspace's sandbox. */
export interface SandboxRecord {
  readonly provider: CloudProviderName;
  readonly id: string;
  readonly createdAt: number;
  /** Running time of sandboxes this workspace had before, and of this one up to its last pause, ms. */
  readonly runningMs: number;
  /** When it was last started or resumed (epoch ms); absent while paused. */
  readonly runningSince?: number | undefined;
}

/** The record file of the workspace at `dir`. */
export function sandboxRecordPath(dir: string): string {
  return join(dirname(dir), ".sandboxes", `${basename(dir)}.json`);
}

/** The record of the workspace at `dir`, or undefined (none, or unreadable). */
export async function readSandboxRecord(dir: string): Promise<SandboxRecord | undefined> {
  try {
    const parsed = JSON.parse(await readFile(sandboxRecordPath(dir), "utf8")) as SandboxRecord;
    return typeof parsed.id === "string" && typeof parsed.provider === "string" ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Writes the record of the workspace at `dir` (atomically). */
export async function writeSandboxRecord(dir: string, record: SandboxRecord): Promise<void> {
  const path = sandboxRecordPath(dir);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(record), { mode: 0o600 });
  await rename(tmp, path);
}

/** Removes the record of the workspace at `dir`. */
export async function removeSandboxRecord(dir: string): Promise<void> {
  await rm(sandboxRecordPath(dir), { force: true });
}

/** Hours a workspace's sandboxes have run, from its record (0 without one). */
export function sandboxHours(record: SandboxRecord | undefined, now = Date.now()): number {
  if (!record) return 0;
  const running = record.runningSince === undefined ? 0 : Math.max(0, now - record.runningSince);
  return (record.runningMs + running) / 3_600_000;
}
