/**
 * `read_file`, `write_file`, `patch`, `search_files` (toolset "files"): the file engine of this folder
 * as the agent's tools, in the session's workspace. Paths are relative to the workspace, or absolute as
 * commands in the sandbox see it (`/workspace/...`); a path outside it, after symlinks, is refused.
 */
import { z } from "zod";
import { defineTool } from "../../agent/tool-registry.js";
import type { Tool, ToolContext } from "../../agent/types.js";
import type { WorkspaceManager } from "../../exec/index.js";
import { patchFile } from "./patch-file.js";
import { readFile } from "./read-file.js";
import { searchFiles } from "./search-files.js";
import type { FileScope } from "./types.js";
import { writeFile } from "./write-file.js";

/** What the file tools work in. */
export interface FileToolsDeps {
  workspaces: WorkspaceManager;
  /** The workspace's path as commands see it (the sandbox mounts it at `/workspace`). */
  virtualRoot?: string | undefined;
}

async function scopeOf(deps: FileToolsDeps, ctx: ToolContext): Promise<FileScope> {
  const workspace = await deps.workspaces.ensure({
    sessionKey: ctx.origin.sessionKey,
    userKey: `${ctx.origin.chat.platform}:user:${ctx.origin.userId}`,
  });
  return {
    root: workspace.dir,
    resolve: (path) => deps.workspaces.resolve(workspace, path, { virtualRoot: deps.virtualRoot }),
  };
}

/** The four file tools, bound to `deps`. */
export function fileTools(deps: FileToolsDeps): Tool[] {
  const where = deps.virtualRoot
    ? `Paths are relative to the workspace, or absolute under ${deps.virtualRoot}.`
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
