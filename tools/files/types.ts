/**
 * Where the file tools may read and write. `resolve` turns a path the model gave (relative to `root`
 * or absolute) into an absolute real path inside the workspace, or throws a HeraldError saying why not
 * (outside the workspace, a symlink escaping it). The workspace manager provides the real one;
 * `createFileScope` is a realpath-based one for tests and single-user setups.
 */
export interface FileScope {
  /** Absolute real path of the workspace. */
  root: string;
  resolve(path: string): string;
}

/** Options every file tool takes besides its arguments. */
export interface FileToolOptions {
  /** Stops the tool between files or chunks; it then rejects with the signal's reason. */
  signal?: AbortSignal;
}
