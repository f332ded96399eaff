/**
 * A log destination that appends JSON lines to one file and rotates it by size: `herald.log` is the
 * current file, `herald.log.1` the one before, up to `herald.log.<keep>`; older files are deleted.
 * Writes are synchronous (a crash loses no line already logged) and each line lands whole in one file.
 */
import {
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { dirname } from "node:path";

export interface RotatingFileOptions {
  /** The current file, e.g. `HERALD_HOME/logs/herald.log`; its folder is created. */
  path: string;
  /** Rotate before a write would take the file past this size. @defaultValue 10 MiB */
  maxBytes?: number;
  /** Rotated files kept besides the current one. @defaultValue 5 */
  keep?: number;
}

/** A pino destination (`write(line)`), plus `close()`. */
export interface RotatingFile {
  write(line: string): void;
  close(): void;
}

/** Opens (or creates) the log file for appending. Never throws on write: a full disk must not stop the gateway. */
export function createRotatingFile(options: RotatingFileOptions): RotatingFile {
  const { path } = options;
  const maxBytes = options.maxBytes ?? 10 * 1024 * 1024;
  const keep = options.keep ?? 5;
  mkdirSync(dirname(path), { recursive: true });
  let fd: number | undefined = openSync(path, "a", 0o600);
  let size = fstatSync(fd).size;
  let failed = false;

  const rotate = () => {
    if (fd !== undefined) closeSync(fd);
    fd = undefined;
    rmSync(`${path}.${keep}`, { force: true });
    for (let i = keep - 1; i >= 1; i--)
      if (existsSync(`${path}.${i}`)) renameSync(`${path}.${i}`, `${path}.${i + 1}`);
    if (keep > 0) renameSync(path, `${path}.1`);
    else rmSync(path, { force: true });
    fd = openSync(path, "a", 0o600);
    size = 0;
  };

  return {
    write(line: string) {
      const bytes = Buffer.byteLength(line);
      try {
        if (size > 0 && size + bytes > maxBytes) rotate();
        if (fd === undefined) {
          fd = openSync(path, "a", 0o600);
          size = fstatSync(fd).size;
        }
        writeSync(fd, line);
        size += bytes;
        failed = false;
      } catch (err) {
        // Said once per streak on stderr (the logger cannot log its own failure), then retried per line.
        if (!failed) process.stderr.write(`herald: cannot write ${path}: ${(err as Error).message}\n`);
        failed = true;
      }
    },
    close() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}
