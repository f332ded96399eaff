/**
 * Reading the log files `core/log-file.ts` writes: the last lines of a file and its rotations
 * (`herald logs`), following it across rotations (`herald logs -f`), and the tail the dashboard's log
 * page shows.
 */
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync, statSync } from "node:fs";

export interface ReadLogsOptions {
  /** Lines to show. @defaultValue 50 */
  lines?: number;
  /** Each line as written (JSON) or through this formatter. */
  format?: ((line: string) => string) | undefined;
  out?: NodeJS.WritableStream;
}

/** The last `lines` lines of `path` and its rotations (`path.1`, `path.2`, …), oldest first. */
export function lastLines(path: string, lines: number): string[] {
  const found: string[] = [];
  for (let i = 0; found.length < lines; i++) {
    const file = i === 0 ? path : `${path}.${i}`;
    if (!existsSync(file)) break;
    const text = readFileSync(file, "utf8").split("\n").filter(Boolean);
    found.unshift(...text.slice(Math.max(0, text.length - (lines - found.length))));
  }
  return found;
}

/** Prints the last lines; with `follow`, keeps printing new ones until `signal` aborts. */
export async function printLogs(
  path: string,
  options: ReadLogsOptions & { follow?: boolean; signal?: AbortSignal; pollMs?: number },
): Promise<void> {
  const out = options.out ?? process.stdout;
  const show = (line: string) => out.write(options.format ? options.format(line) : `${line}\n`);
  for (const line of lastLines(path, options.lines ?? 50)) show(line);
  if (!options.follow) return;
  let offset = existsSync(path) ? statSync(path).size : 0;
  let inode = existsSync(path) ? statSync(path).ino : 0;
  let partial = "";
  const emit = (text: string) => {
    const parts = (partial + text).split("\n");
    partial = parts.pop() ?? "";
    for (const line of parts) if (line) show(line);
  };
  while (!options.signal?.aborted) {
    await new Promise((r) => setTimeout(r, options.pollMs ?? 250));
    if (!existsSync(path)) continue;
    const stat = statSync(path);
    if (stat.ino !== inode) {
      // Rotated since the last look: finish the file we were reading (now `.k`), then any rotated
      // after it (`.k-1` … `.1`), then read the new file from its start.
      const rotated: string[] = [];
      for (let i = 1; existsSync(`${path}.${i}`); i++) rotated.push(`${path}.${i}`);
      const k = rotated.findIndex((f) => statSync(f).ino === inode);
      if (k >= 0) {
        emit(readFrom(rotated[k]!, offset));
        for (let i = k - 1; i >= 0; i--) emit(readFrom(rotated[i]!, 0));
      }
      inode = stat.ino;
      offset = 0;
    } else if (stat.size < offset) offset = 0; // truncated
    const text = readFrom(path, offset);
    offset += Buffer.byteLength(text);
    emit(text);
  }
}

/** The bytes of `file` from `offset` to its end, as text. */
function readFrom(file: string, offset: number): string {
  const size = statSync(file).size;
  if (size <= offset) return "";
  const fd = openSync(file, "r");
  try {
    const buffer = Buffer.alloc(size - offset);
    readSync(fd, buffer, 0, buffer.length, offset);
    return buffer.toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/** The last `maxLines` lines of `path` (read from its last 256 KiB), or undefined without the file. */
export function tailFile(path: string, maxLines: number): { file: string; lines: string[] } | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return undefined;
  }
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, 256 * 1024);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    const lines = buffer.toString("utf8").split("\n");
    // The first line is cut unless the read started at the file's beginning.
    if (length < size) lines.shift();
    return { file: path, lines: lines.filter((l) => l.trim()).slice(-maxLines) };
  } finally {
    closeSync(fd);
  }
}
