import type { SpawnedProcess, SpawnRequest, WorkspaceFiles } from "../../exec/index.js";

/**
 * Where the file tools read and write: one workspace, through its execution backend. `resolve` is the
 * gateway's first check of a path the model gave (relative to the workspace, or absolute under `root`):
 * it returns the workspace-relative path or throws a HeraldError saying why not. The I/O itself goes
 * through `files`, where the workspace's commands run, which refuses real paths outside the workspace
 * (links pointing out) where the files are: the gateway never opens a workspace path itself.
 */
export interface FileScope {
  /** The workspace root as the model sees it (`/workspace` in the sandbox, else its path). */
  root: string;
  files: WorkspaceFiles;
  resolve(path: string): string;
  /** Starts a command in the workspace (search_files' ripgrep, or find and grep), where commands run. */
  spawn(request: SpawnRequest): SpawnedProcess;
}

/** Options every file tool takes besides its arguments. */
export interface FileToolOptions {
  /** Stops the tool between files or chunks; it then rejects with the signal's reason. */
  signal?: AbortSignal;
}
