/**
 * `LocalWorkspaceFiles`: a workspace's files through this process's own file system calls. Right where
 * commands run on this host unconfined (`LocalBackend`), or where no command runs at all: there the path
 * check (`resolveInside`, symbolic links followed) is what keeps a path in the workspace, and no
 * boundary exists that a race could cross. Every confining backend has its own implementation.
 */
import { constants, realpathSync } from "node:fs";
import { mkdir, open, stat } from "node:fs/promises";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import { HeraldError } from "../../core/errors.js";
import { writeFileAtomic } from "./atomic-write.js";
import { realpathOfPrefix } from "./paths.js";
import type { FileInfo, Workspace, WorkspaceFiles, WriteOutcome } from "./types.js";

/** Turns a file system error about `path` into the `HeraldError` the contract names. */
export function fileError(code: string | undefined, message: string, path: string): HeraldError {
  if (code === "ENOENT" || code === "ENOTDIR")
    return new HeraldError(`${path} does not exist in the workspace`, { code: "not_found" });
  if (code === "EISDIR")
    return new HeraldError(`${path} is a directory; give a file path inside it`, { code: "invalid_input" });
  if (code === "ENOTREG")
    return new HeraldError(`${path} is not a regular file (a device, socket or FIFO)`, {
      code: "invalid_input",
    });
  if (code === "EFBIG" || code === "ENOSPC" || code === "EDQUOT")
    return new HeraldError(`${path} cannot be written: ${message}`, { code: "invalid_input" });
  return new HeraldError(`${path} cannot be read or written: ${message}`, { code: "tool_error" });
}

function rethrow(err: unknown, path: string): never {
  if (err instanceof HeraldError) throw err;
  const e = err as NodeJS.ErrnoException;
  throw fileError(e.code, e.message, path);
}

/** The kind, size, mode and time of a `stat` result. */
export function fileInfo(s: {
  isFile(): boolean;
  isDirectory(): boolean;
  size: number;
  mode: number;
  mtimeMs: number;
}): FileInfo {
  const kind = s.isFile() ? "file" : s.isDirectory() ? "directory" : "other";
  return { kind, sizeBytes: s.size, mode: s.mode & 0o7777, mtimeMs: s.mtimeMs };
}

/** A workspace's files on this host, each path resolved and checked before use. */
export class LocalWorkspaceFiles implements WorkspaceFiles {
  constructor(private readonly workspace: Workspace) {}

  /** The real path of `path` (links followed, dangling ones too), refused outside the workspace. */
  private resolve(path: string): string {
    const root = realpathSync(this.workspace.dir);
    const real = realpathOfPrefix(resolve(root, path));
    const rel = relative(root, real);
    if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel))
      throw new HeraldError(
        `${path} is outside the workspace (${root}; it resolves to ${real}); use a path inside it`,
        { code: "invalid_input" },
      );
    return real;
  }

  async stat(path: string): Promise<FileInfo | undefined> {
    try {
      return fileInfo(await stat(this.resolve(path)));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") return undefined;
      rethrow(err, path);
    }
  }

  async read(path: string, range: { offset: number; length: number }): Promise<Uint8Array> {
    try {
      // Never blocks on a FIFO a command left there, and reads regular files only.
      const handle = await open(this.resolve(path), constants.O_RDONLY | constants.O_NONBLOCK);
      try {
        const info = await handle.stat();
        if (info.isDirectory()) throw fileError("EISDIR", "", path);
        if (!info.isFile()) throw fileError("ENOTREG", "", path);
        const buffer = Buffer.alloc(range.length);
        const { bytesRead } = await handle.read(buffer, 0, range.length, range.offset);
        return buffer.subarray(0, bytesRead);
      } finally {
        await handle.close();
      }
    } catch (err) {
      rethrow(err, path);
    }
  }

  async write(
    path: string,
    data: Uint8Array | AsyncIterable<Uint8Array>,
    options: { mode?: number } = {},
  ): Promise<WriteOutcome> {
    try {
      const abs = this.resolve(path);
      const before = await stat(abs).catch(() => undefined);
      if (before?.isDirectory()) throw fileError("EISDIR", "", path);
      await mkdir(dirname(abs), { recursive: true });
      const mode = before ? before.mode & 0o7777 : (options.mode ?? 0o644);
      const writtenBytes = await writeFileAtomic(abs, data, mode);
      return { created: !before, previousBytes: before?.size ?? 0, writtenBytes };
    } catch (err) {
      rethrow(err, path);
    }
  }
}
