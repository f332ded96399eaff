/**
 * `WorkspaceAccess`: the one way the gateway's tools reach a workspace's files. It makes the workspace
 * ready on the backend and hands out its `WorkspaceFiles` (through the backend, where the commands
 * run) with the quota applied to writes. Without a backend (the terminal tools are off, so no command
 * runs in any workspace) the files are this host's, behind the path check.
 */

import { posix } from "node:path";
import { LocalWorkspaceFiles } from "./files-local.js";
import { workspacePath } from "./paths.js";
import type { WorkspaceQuota } from "./quota.js";
import type { ExecutionBackend, Workspace, WorkspaceFiles } from "./types.js";
import type { WorkspaceManager, WorkspaceOwner } from "./workspaces.js";

/** A workspace ready for use. */
export interface OpenWorkspace {
  readonly workspace: Workspace;
  /** Its files where its commands run, writes checked against the quota. */
  readonly files: WorkspaceFiles;
  /** The workspace root as the model sees it (`/workspace` in the sandbox, else its directory). */
  readonly shownRoot: string;
  /** The gateway's first check of a path the model gave: workspace-relative, or `invalid_input`. */
  resolve(path: string): string;
  /** `rel` as the model sees it (under `shownRoot`). */
  shown(rel: string): string;
}

/** Options of `WorkspaceAccess`. */
export interface WorkspaceAccessOptions {
  readonly workspaces: WorkspaceManager;
  readonly backend?: ExecutionBackend | undefined;
  readonly quota?: WorkspaceQuota | undefined;
  /** Where commands see the workspace (`/workspace` for the sandbox). */
  readonly virtualRoot?: string | undefined;
}

/** Opens workspaces for the tools; see the module comment. */
export class WorkspaceAccess {
  readonly workspaces: WorkspaceManager;
  readonly backend: ExecutionBackend | undefined;
  readonly quota: WorkspaceQuota | undefined;
  readonly virtualRoot: string | undefined;

  constructor(options: WorkspaceAccessOptions) {
    this.workspaces = options.workspaces;
    this.backend = options.backend;
    this.quota = options.quota;
    this.virtualRoot = options.virtualRoot;
  }

  /**
   * The workspace of `owner`, created and marked used, prepared on the backend.
   * @throws HeraldError `tool_error` when it cannot be created or prepared.
   */
  async open(owner: WorkspaceOwner, signal?: AbortSignal): Promise<OpenWorkspace> {
    const workspace = await this.workspaces.ensure(owner);
    await this.backend?.prepare(workspace, signal);
    const raw = this.backend ? this.backend.files(workspace) : new LocalWorkspaceFiles(workspace);
    const files = this.quota ? this.quota.wrap(workspace, raw) : raw;
    const shownRoot = this.virtualRoot ?? workspace.dir;
    return {
      workspace,
      files,
      shownRoot,
      resolve: (path) => workspacePath(path, { virtualRoot: this.virtualRoot, hostRoot: workspace.dir }),
      shown: (rel) => (rel === "." ? shownRoot : posix.join(shownRoot, rel)),
    };
  }
}
