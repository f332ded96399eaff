import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { HeraldError } from "../../../core/errors.js";
import {
  type ExecutionBackend,
  LocalBackend,
  LocalWorkspaceFiles,
  type Workspace,
  type WorkspaceFiles,
  workspacePath,
} from "../../exec/index.js";
import type { FileScope } from "./types.js";

/**
 * The scope of one workspace on `backend`: paths checked lexically here (`workspacePath`), files and
 * searches through the backend.
 * @param shownRoot the workspace as the model sees it (`/workspace` in the sandbox). @defaultValue its dir
 */
export function workspaceFileScope(
  backend: ExecutionBackend,
  workspace: Workspace,
  files: WorkspaceFiles,
  shownRoot?: string,
): FileScope {
  const root = shownRoot ?? workspace.dir;
  return {
    root,
    files,
    resolve: (path) => workspacePath(path, { virtualRoot: shownRoot, hostRoot: workspace.dir }),
    spawn: (request) => backend.spawn(workspace, request),
  };
}

/**
 * A scope over the folder `root` on this host (tests, single-user tools): files and searches run here
 * (`LocalBackend`), symbolic links are followed and refused when they lead out of `root`.
 * @throws HeraldError `not_found` when `root` does not exist.
 */
export function createFileScope(root: string): FileScope {
  let realRoot: string;
  try {
    realRoot = realpathSync(resolve(root));
  } catch (err) {
    throw new HeraldError(`workspace ${root} does not exist`, { code: "not_found", cause: err });
  }
  const workspace = { key: "local", dir: realRoot };
  return workspaceFileScope(new LocalBackend(), workspace, new LocalWorkspaceFiles(workspace));
}
