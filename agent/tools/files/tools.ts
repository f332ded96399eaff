/**
 * `read_file`, `write_file`, `patch`, `search_files` (toolset "files"): the file engine of this folder
 * as the agent's tools, in the session's workspace. Paths are relative to the workspace, or absolute as
 * commands in the sandbox see it (`/workspace/...`). Every read, write and search runs where the
 * workspace's commands run (in the sandbox as its user), so a path whose real location is outside the
 * workspace is refused there, whatever a command does to the folders meanwhile.
 */
import { z } from "zod";
import type { ExecutionBackend, WorkspaceAccess } from "../../exec/index.js";
import { defineTool } from "../../tool-registry.js";
import type { Tool, ToolContext } from "../../types.js";
import { patchFile } from "./patch-file.js";
import { readFile } from "./read-file.js";
import { workspaceFileScope } from "./scope.js";
import { searchFiles } from "./search-files.js";
import type { FileScope } from "./types.js";
import { writeFile } from "./write-file.js";

/** What the file tools work in: the workspaces, on the backend their commands run on. */
export interface FileToolsDeps {
  access: WorkspaceAccess;
  backend: ExecutionBackend;
}

async function scopeOf(deps: FileToolsDeps, ctx: ToolContext): Promise<FileScope> {
  const open = await deps.access.open(
    { sessionKey: ctx.origin.sessionKey, userKey: `${ctx.origin.chat.platform}:user:${ctx.origin.userId}` },
    ctx.signal,
  );
  return workspaceFileScope(deps.backend, open.workspace, open.files, deps.access.virtualRoot);
}

/** The four file tools, bound to `deps`. */
export function fileTools(deps: FileToolsDeps): Tool[] {
  const virtualRoot = deps.access.virtualRoot;
  const where = virtualRoot
    ? `Paths are relative to the workspace, or absolute under ${virtualRoot}.`
    : "Paths are relative to the workspace.";
  return [
    defineTool({
      name: "read_file",
      description: `Read a text file or a document (PDF, DOCX as text) in the workspace, with line numbers, a page at a time. ${where}`,
      parameters: z.object({
        path: z.string().min(1),
        offset: z.number().int().min(1).optional().describe("First line to show (1-based)."),
        limit: z.number().int().min(1).max(10_000).optional().describe("Lines to show (default 2000)."),
      }),
      toolset: "files",
      label: (args) => `read_file ${args.path}`,
      execute: async (args, ctx) => readFile(await scopeOf(deps, ctx), args, { signal: ctx.signal }),
    }),
    defineTool({
      name: "write_file",
      description: `Create or overwrite a file in the workspace (atomically; parent folders are created). ${where}`,
      parameters: z.object({ path: z.string().min(1), content: z.string() }),
      toolset: "files",
      changesWorkspace: true,
      label: (args) => `write_file ${args.path}`,
      execute: async (args, ctx) => writeFile(await scopeOf(deps, ctx), args, { signal: ctx.signal }),
    }),
    defineTool({
      name: "patch",
      description: `Replace exact text in a file: old_string must occur once (or set replace_all). Refused, with the count and lines, when it is missing or ambiguous. ${where}`,
      parameters: z.object({
        path: z.string().min(1),
        old_string: z.string().min(1),
        new_string: z.string(),
        replace_all: z.boolean().optional(),
      }),
      toolset: "files",
      changesWorkspace: true,
      label: (args) => `patch ${args.path}`,
      execute: async (args, ctx) => patchFile(await scopeOf(deps, ctx), args, { signal: ctx.signal }),
    }),
    defineTool({
      name: "search_files",
      description: `Find files by name (pattern: a glob, a regex or part of the name), or with content: true, lines matching a regex. ${where}`,
      parameters: z.object({
        pattern: z.string().min(1),
        path: z.string().min(1).optional().describe("Folder to search (default: the workspace)."),
        glob: z.string().min(1).optional().describe("Only files matching this glob, e.g. *.ts."),
        content: z.boolean().optional().describe("Search file contents instead of names."),
        limit: z.number().int().min(1).max(1000).optional(),
      }),
      toolset: "files",
      label: (args) => `search_files ${args.pattern}${args.path ? ` in ${args.path}` : ""}`,
      execute: async (args, ctx) => searchFiles(await scopeOf(deps, ctx), args, { signal: ctx.signal }),
    }),
  ];
}
