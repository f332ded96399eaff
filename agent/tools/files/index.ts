/**
 * The engine of the agent's file tools: read (paged, numbered, documents as text), write (atomic),
 * patch (exact replacement with a diff) and search (ripgrep, or find and grep), all inside a `FileScope`.
 * Each returns the plain string the model sees and throws a HeraldError whose message says what to do.
 */

export { fileTools } from "./declaration.js";
export { patchFile } from "./patch-file.js";
export { type ReadFileOptions, readFile } from "./read-file.js";
export type { FileToolsDeps } from "./schemas.js";
export {
  type PatchFileArgs,
  patchFileArgsSchema,
  type ReadFileArgs,
  readFileArgsSchema,
  type SearchFilesArgs,
  searchFilesArgsSchema,
  ToolArgsError,
  type WriteFileArgs,
  writeFileArgsSchema,
} from "./schemas.js";
export { createFileScope, workspaceFileScope } from "./scope.js";
export { hasRipgrep } from "./search/ripgrep.js";
export { nameMatcher, type SearchFilesOptions, searchFiles } from "./search-files.js";
export type { FileScope, FileToolOptions } from "./types.js";
export { writeFile } from "./write-file.js";
