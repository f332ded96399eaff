/** The file tools' arguments as the model sends them, validated with zod at the tool boundary. */
import { z } from "zod";
import { HeraldError } from "../../../core/errors.js";
import type { ExecutionBackend, WorkspaceAccess } from "../../exec/index.js";

/** `read_file` arguments. `offset` is the 1-based line to start at. */
export const readFileArgsSchema = z.object({
  path: z.string().min(1),
  offset: z.number().int().min(1).optional(),
  limit: z.number().int().min(1).max(10_000).optional(),
});
export type ReadFileArgs = z.infer<typeof readFileArgsSchema>;

/** `write_file` arguments. */
export const writeFileArgsSchema = z.object({
  path: z.string().min(1),
  content: z.string(),
});
export type WriteFileArgs = z.infer<typeof writeFileArgsSchema>;

/** `patch_file` arguments: replace `old_string` (exact text) with `new_string`. */
export const patchFileArgsSchema = z.object({
  path: z.string().min(1),
  old_string: z.string().min(1, "old_string is empty; to create or overwrite a file use write_file"),
  new_string: z.string(),
  replace_all: z.boolean().optional(),
});
export type PatchFileArgs = z.infer<typeof patchFileArgsSchema>;

/**
 * `search_files` arguments. With `content`, `pattern` is a regular expression over lines; without, it
 * matches file names (see `searchFiles`). `glob` narrows the files either way.
 */
export const searchFilesArgsSchema = z.object({
  pattern: z.string().min(1),
  path: z.string().min(1).optional(),
  glob: z.string().min(1).optional(),
  content: z.boolean().optional(),
  ignoreCase: z.boolean().optional(),
  limit: z.number().int().min(1).max(1000).optional(),
});
export type SearchFilesArgs = z.infer<typeof searchFilesArgsSchema>;

/** Parses tool arguments, turning a zod failure into one readable line. */
export function parseArgs<T>(schema: z.ZodType<T>, args: unknown, tool: string): T {
  const result = schema.safeParse(args);
  if (result.success) return result.data;
  const issues = result.error.issues
    .map((i) => `${i.path.join(".") || "arguments"}: ${i.message}`)
    .join("; ");
  throw new ToolArgsError(`${tool}: invalid arguments (${issues})`);
}

/** Arguments that do not fit the tool's schema. */
export class ToolArgsError extends HeraldError {
  constructor(message: string) {
    super(message, { code: "tool_invalid_args" });
    this.name = "ToolArgsError";
  }
}

/** `read_file` as the model gets it. */
export const readFileToolParameters = z.object({
  path: z.string().min(1),
  offset: z.number().int().min(1).optional().describe("First line to show (1-based)."),
  limit: z.number().int().min(1).max(10_000).optional().describe("Lines to show (default 2000)."),
});

/** `write_file` as the model gets it. */
export const writeFileToolParameters = z.object({ path: z.string().min(1), content: z.string() });

/** `patch` as the model gets it. */
export const patchToolParameters = z.object({
  path: z.string().min(1),
  old_string: z.string().min(1),
  new_string: z.string(),
  replace_all: z.boolean().optional(),
});

/** `search_files` as the model gets it. */
export const searchFilesToolParameters = z.object({
  pattern: z.string().min(1),
  path: z.string().min(1).optional().describe("Folder to search (default: the workspace)."),
  glob: z.string().min(1).optional().describe("Only files matching this glob, e.g. *.ts."),
  content: z.boolean().optional().describe("Search file contents instead of names."),
  limit: z.number().int().min(1).max(1000).optional(),
});

/** What the file tools work in: the workspaces, on the backend their commands run on. */
export interface FileToolsDeps {
  access: WorkspaceAccess;
  backend: ExecutionBackend;
}
