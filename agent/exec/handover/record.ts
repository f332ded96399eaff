/**
 * A worker's record of the generation its copy of a workspace holds: `<root>/.handover/<name>.json`,
 * beside the workspaces and out of reach of their commands. Per path it keeps the manifest entry and,
 * for files, the size and modification time seen when it was written or hashed, so the next push hashes
 * only files whose size or time changed. It names the workspace folder's inode: a folder deleted and
 * made again (pruned, removed by hand) no longer matches its record, and the next turn pulls it whole.
 */
import { lstat, mkdir, readFile, rename, unlink, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { z } from "zod";
import { manifestEntrySchema } from "./types.js";

/** The record's folder under the workspaces' root. */
export const RECORD_DIR = ".handover";

const recordSchema = z.object({
  generation: z.number().int().min(0),
  ino: z.number(),
  entries: z.record(
    z.string(),
    z.object({
      entry: manifestEntrySchema,
      sizeBytes: z.number().optional(),
      mtimeMs: z.number().optional(),
    }),
  ),
});

/** What a worker knows of its copy of one workspace. */
export type LocalRecord = z.infer<typeof recordSchema>;

/** Where the record of the workspace folder `dir` lives. */
export function recordPath(dir: string): string {
  return join(dir, "..", RECORD_DIR, `${basename(dir)}.json`);
}

/** The folder's inode, or undefined when it is missing. */
export async function folderIno(dir: string): Promise<number | undefined> {
  const info = await lstat(dir).catch(() => undefined);
  return info?.isDirectory() ? info.ino : undefined;
}

/** The record of `dir`, or undefined when there is none, it is unreadable, or names another folder. */
export async function readRecord(dir: string): Promise<LocalRecord | undefined> {
  const raw = await readFile(recordPath(dir), "utf8").catch(() => undefined);
  if (raw === undefined) return undefined;
  let parsed: LocalRecord;
  try {
    parsed = recordSchema.parse(JSON.parse(raw));
  } catch {
    return undefined;
  }
  return parsed.ino === (await folderIno(dir)) ? parsed : undefined;
}

/** Writes the record of `dir` atomically (a temporary file renamed over it). */
export async function writeRecord(dir: string, record: LocalRecord): Promise<void> {
  const path = recordPath(dir);
  await mkdir(join(dir, "..", RECORD_DIR), { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, JSON.stringify(record), { mode: 0o600 });
  await rename(temp, path);
}

/** Deletes the record of `dir` (its workspace was deleted). Never throws. */
export async function forgetRecord(dir: string): Promise<void> {
  await unlink(recordPath(dir)).catch(() => undefined);
}
