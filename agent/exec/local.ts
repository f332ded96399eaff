/**
 * `LocalBackend`: commands run on the gateway's host, as the gateway's user, in the workspace
 * directory. No confinement beyond the process group and a minimal environment: use it only where the
 * agent is trusted with the host (a personal machine), otherwise `SandboxBackend`.
 */
import { spawnGroup } from "./child.js";
import { LocalWorkspaceFiles } from "./files-local.js";
import { resolveInside } from "./paths.js";
import {
  type Availability,
  DEFAULT_PATH,
  type ExecutionBackend,
  type SpawnedProcess,
  type SpawnRequest,
  type Workspace,
  type WorkspaceFiles,
} from "./types.js";
import { makeWorkspaceDir } from "./workspaces.js";

/** Options of `LocalBackend`. */
export interface LocalBackendOptions {
  /** The shell. @defaultValue "/bin/sh" */
  readonly shell?: string;
}

/** The minimal environment of a host command: PATH, HOME (the workspace), LANG, plus `extra`. */
export function minimalEnv(
  home: string,
  extra: Readonly<Record<string, string>> = {},
): Record<string, string> {
  return { PATH: DEFAULT_PATH, HOME: home, LANG: "C.UTF-8", ...extra };
}

/** Runs commands on the host in a detached process group, so a kill reaches every child. */
export class LocalBackend implements ExecutionBackend {
  readonly name = "local" as const;
  private readonly shell: string;

  constructor(options: LocalBackendOptions = {}) {
    this.shell = options.shell ?? "/bin/sh";
  }

  async checkAvailable(): Promise<Availability> {
    return { available: true };
  }

  async prepare(workspace: Workspace): Promise<void> {
    await makeWorkspaceDir(workspace.dir);
  }

  spawn(workspace: Workspace, request: SpawnRequest): SpawnedProcess {
    const cwd = resolveInside(workspace.dir, request.workdir ?? ".");
    return spawnGroup(this.shell, ["-c", request.command], {
      cwd,
      env: minimalEnv(workspace.dir, request.env),
    });
  }

  /** Commands run here unconfined: the files are this host's, behind the workspace path check. */
  files(workspace: Workspace): WorkspaceFiles {
    return new LocalWorkspaceFiles(workspace);
  }

  async close(): Promise<void> {}
}

/** Builds a `LocalBackend`. */
export function createLocalBackend(options: LocalBackendOptions = {}): LocalBackend {
  return new LocalBackend(options);
}
