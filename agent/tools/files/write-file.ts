import { displayPath, formatCount } from "./common.js";
import { parseArgs, type WriteFileArgs, writeFileArgsSchema } from "./schemas.js";
import type { FileScope, FileToolOptions } from "./types.js";

/**
 * Writes a whole file atomically (temporary file + rename, where the workspace's commands run),
 * creating missing parent directories and keeping the permissions of a file it replaces.
 * @returns one line: created or replaced, the path and the bytes written.
 * @throws ToolArgsError for bad arguments; HeraldError from `scope.resolve` or `scope.files.write`
 *   (`invalid_input` when the path is a directory, outside the workspace, or past the quota).
 */
export async function writeFile(
  scope: FileScope,
  args: WriteFileArgs,
  options: FileToolOptions = {},
): Promise<string> {
  const { path, content } = parseArgs(writeFileArgsSchema, args, "write_file");
  const rel = scope.resolve(path);
  const shown = displayPath(rel);
  options.signal?.throwIfAborted();
  const outcome = await scope.files.write(rel, Buffer.from(content, "utf8"));
  const written = `${formatCount(outcome.writtenBytes)} bytes written`;
  return outcome.created
    ? `Created ${shown} (${written})`
    : `Replaced ${shown} (${written}; it had ${formatCount(outcome.previousBytes)})`;
}
