/**
 * What a workspace holds now, seen from this host without following a link: every folder, regular
 * file (size, mode, modification time) and link under its root. Sockets, FIFOs and devices are left
 * out (they cannot travel), and so is anything below a path `skip` names. Only metadata is read here;
 * contents are read through the backend (sync.ts), where a link swapped in meanwhile cannot lead out.
 */
import type { Dirent } from "node:fs";
import { lstat, readdir, readlink } from "node:fs/promises";
import { join } from "node:path";

/** One path as the scan saw it. */
export type ScannedEntry =
  | { readonly kind: "file"; readonly sizeBytes: number; readonly mode: number; readonly mtimeMs: number }
  | { readonly kind: "dir"; readonly mode: number }
  | { readonly kind: "link"; readonly target: string };

/** Options of {@link scanWorkspace}. */
export interface ScanOptions {
  /** Paths stop here: more entries than this is an error. @defaultValue 200_000 */
  readonly maxEntries?: number | undefined;
}

/**
 * The entries under `root`, by `/`-separated relative path. A folder that vanishes while it is read
 * is skipped.
 * @throws Error when the workspace holds more than `maxEntries` paths.
 */
export async function scanWorkspace(
  root: string,
  options: ScanOptions = {},
): Promise<Map<string, ScannedEntry>> {
  const maxEntries = options.maxEntries ?? 200_000;
  const out = new Map<string, ScannedEntry>();
  const pending: string[] = [""];
  while (pending.length > 0) {
    const rel = pending.pop() as string;
    let names: Dirent[];
    try {
      names = await readdir(rel ? join(root, rel) : root, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const dirent of names) {
      const path = rel ? `${rel}/${dirent.name}` : dirent.name;
      const info = await lstat(join(root, path)).catch(() => undefined);
      if (!info) continue;
      let entry: ScannedEntry | undefined;
      if (info.isDirectory()) {
        entry = { kind: "dir", mode: info.mode & 0o7777 };
        pending.push(path);
      } else if (info.isFile())
        entry = { kind: "file", sizeBytes: info.size, mode: info.mode & 0o7777, mtimeMs: info.mtimeMs };
      else if (info.isSymbolicLink()) {
        const target = await readlink(join(root, path)).catch(() => undefined);
        if (target !== undefined) entry = { kind: "link", target };
      }
      if (!entry) continue;
      out.set(path, entry);
      if (out.size > maxEntries)
        throw new Error(`the workspace holds over ${maxEntries} paths; it is not handed over`);
    }
  }
  return out;
}
