import { mkdir, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { HeraldError } from "../../core/errors.js";
import { writeFileAtomic } from "./atomic-write.js";
import { displayPath, formatCount } from "./common.js";
import { parseArgs, type WriteFileArgs, writeFileArgsSchema } from "./schemas.js";
import type { FileScope, FileToolOptions } from "./types.js";

/**
 * Writes a whole file atomically (temporary file + rename), creating missing parent directories and
 * keeping the permissions of a file it replaces.
 * @returns one line: created or replaced, the path and the bytes written.
 * @throws ToolArgsError for bad arguments; HeraldError from `scope.resolve`, or `invalid_input` when the
 *   path is a directory.
 */
export async function writeFile(
  scope: FileScope,
  args: WriteFileArgs,
  options: FileToolOptions = {},
): Promise<string> {
  const { path, content } = parseArgs(writeFileArgsSchema, args, "write_file");
  const abs = scope.resolve(path);
  const shown = displayPath(scope, abs);
  options.signal?.throwIfAborted();
  const before = await stat(abs).catch(() => undefined);
  if (before?.isDirectory())
    throw new HeraldError(`${shown} is a directory; give a file path inside it`, { code: "invalid_input" });
  await mkdir(dirname(abs), { recursive: true });
  const bytes = Buffer.byteLength(content, "utf8");
  await writeFileAtomic(abs, content, before ? before.mode & 0o7777 : undefined);
  return before
    ? `Replaced ${shown} (${formatCount(bytes)} bytes written; it had ${formatCount(before.size)})`
    : `Created ${shown} (${formatCount(bytes)} bytes written)`;
}
