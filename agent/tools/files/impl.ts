/**
 * What `read_file`, `write_file`, `patch` and `search_files` do (`declaration.ts` declares them): the
 * file engine of this folder as the agent's tools, in the session's workspace. Paths are relative to
 * the workspace, or absolute as commands in the sandbox see it (`/workspace/...`). Every read, write and search runs where the
 * workspace's commands run (in the sandbox as its user), so a path whose real location is outside the
 * workspace is refused there, whatever a command does to the folders meanwhile.
 */
import type { ToolRun } from "../../tool-declaration.js";
import type { ToolContext } from "../../types.js";
import { patchFile } from "./patch-file.js";
import { readFile } from "./read-file.js";
import type {
  FileToolsDeps,
  patchToolParameters,
  readFileToolParameters,
  searchFilesToolParameters,
  writeFileToolParameters,
} from "./schemas.js";
import { workspaceFileScope } from "./scope.js";
import { searchFiles } from "./search-files.js";
import type { FileScope } from "./types.js";
import { writeFile } from "./write-file.js";

async function scopeOf(deps: FileToolsDeps, ctx: ToolContext): Promise<FileScope> {
  const open = await deps.access.open(
    { sessionKey: ctx.origin.sessionKey, userKey: `${ctx.origin.chat.platform}:user:${ctx.origin.userId}` },
    ctx.signal,
  );
  return workspaceFileScope(deps.backend, open.workspace, open.files, deps.access.virtualRoot);
}

/** Runs one `read_file` call. */
export const runReadFile: ToolRun<typeof readFileToolParameters, FileToolsDeps> = async (args, ctx, deps) =>
  readFile(await scopeOf(deps, ctx), args, { signal: ctx.signal });

/** Runs one `write_file` call. */
export const runWriteFile: ToolRun<typeof writeFileToolParameters, FileToolsDeps> = async (args, ctx, deps) =>
  writeFile(await scopeOf(deps, ctx), args, { signal: ctx.signal });

/** Runs one `patch` call. */
export const runPatch: ToolRun<typeof patchToolParameters, FileToolsDeps> = async (args, ctx, deps) =>
  patchFile(await scopeOf(deps, ctx), args, { signal: ctx.signal });

/** Runs one `search_files` call. */
export const runSearchFiles: ToolRun<typeof searchFilesToolParameters, FileToolsDeps> = async (
  args,
  ctx,
  deps,
) => searchFiles(await scopeOf(deps, ctx), args, { signal: ctx.signal });
