/**
 * The file tools' declarations (toolset "files"); their implementation (`impl.ts`, the file engine of
 * this folder) loads on the first call.
 */
import { declareTool } from "../../tool-declaration.js";
import type { Tool } from "../../types.js";
import {
  type FileToolsDeps,
  patchToolParameters,
  readFileToolParameters,
  searchFilesToolParameters,
  writeFileToolParameters,
} from "./schemas.js";

/** The four file tools, bound to `deps`. */
export function fileTools(deps: FileToolsDeps): Tool[] {
  const virtualRoot = deps.access.virtualRoot;
  const where = virtualRoot
    ? `Paths are relative to the workspace, or absolute under ${virtualRoot}.`
    : "Paths are relative to the workspace.";
  return [
    declareTool<typeof readFileToolParameters, FileToolsDeps>({
      name: "read_file",
      description: `Read a text file or a document (PDF, DOCX as text) in the workspace, with line numbers, a page at a time. ${where}`,
      parameters: readFileToolParameters,
      toolset: "files",
      label: (args) => `read_file ${args.path}`,
      implementation: () => import("./impl.js").then((m) => m.runReadFile),
    }).with(deps),
    declareTool<typeof writeFileToolParameters, FileToolsDeps>({
      name: "write_file",
      description: `Create or overwrite a file in the workspace (atomically; parent folders are created). ${where}`,
      parameters: writeFileToolParameters,
      toolset: "files",
      changesWorkspace: true,
      label: (args) => `write_file ${args.path}`,
      implementation: () => import("./impl.js").then((m) => m.runWriteFile),
    }).with(deps),
    declareTool<typeof patchToolParameters, FileToolsDeps>({
      name: "patch",
      description: `Replace exact text in a file: old_string must occur once (or set replace_all). Refused, with the count and lines, when it is missing or ambiguous. ${where}`,
      parameters: patchToolParameters,
      toolset: "files",
      changesWorkspace: true,
      label: (args) => `patch ${args.path}`,
      implementation: () => import("./impl.js").then((m) => m.runPatch),
    }).with(deps),
    declareTool<typeof searchFilesToolParameters, FileToolsDeps>({
      name: "search_files",
      description: `Find files by name (pattern: a glob, a regex or part of the name), or with content: true, lines matching a regex. ${where}`,
      parameters: searchFilesToolParameters,
      toolset: "files",
      label: (args) => `search_files ${args.pattern}${args.path ? ` in ${args.path}` : ""}`,
      implementation: () => import("./impl.js").then((m) => m.runSearchFiles),
    }).with(deps),
  ];
}
