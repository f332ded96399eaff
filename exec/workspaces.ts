/**
 * Workspaces: one directory per session key (or per user) under a root (`HERALD_HOME/workspaces/`).
 * Directory names are derived from keys safely (chat keys contain ':' and '@'); `prune` removes old
 * ones but never one where a process runs.
 */
import { createHash } from "node:crypto";
import { mkdir, readdir, rm, stat, utimes } from "node:fs/promises";
import { join } from "node:path";
import { HeraldError } from "../core/errors.js";
import { type Logger, silentLogger } from "../core/logger.js";
import { type ResolveInsideOptions, resolveInside } from "./paths.js";
import type { Workspace } from "./types.js";

export { resolveInside } from "./paths.js";

/** Options of `WorkspaceManager`. */
export interface WorkspaceManagerOptions {
  /** Where workspaces live: `HERALD_HOME/workspaces`. */
  readonly rootDir: string;
  /** One workspace per session or one per user (shared by the user's sessions). @defaultValue "session" */
  readonly scope?: "session" | "user";
  readonly logger?: Logger;
}

/** Who a workspace is for. `userKey` is used when the scope is "user" (falls back to `sessionKey`). */
export interface WorkspaceOwner {
  readonly sessionKey: string;
  readonly userKey?: string;
}

/**
 * A directory name for `key`: its safe characters (at most 40) and 12 hex of its SHA-256, so distinct
 * keys never share a directory and the name still says whose it is.
 */
export function workspaceDirName(key: string): string {
  const readable = key
    .replace(/[^A-Za-z0-9._-]+/g, "_")
    .replace(/^[._]+/, "")
    .slice(0, 40);
  const hash = createHash("sha256").update(key).digest("hex").slice(0, 12);
  return readable ? `${readable}-${hash}` : hash;
}

/**
 * Creates a workspace directory (owner-only) if it is missing; with `touch`, marks it used now (pruning
 * counts age from the last use). @throws HeraldError `tool_error` naming the directory and the fix.
 */
export async function makeWorkspaceDir(dir: string, options: { touch?: boolean } = {}): Promise<void> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    if (options.touch) {
      const now = new Date();
      await utimes(dir, now, now);
    }
  } catch (err) {
    throw new HeraldError(
      `cannot create the workspace ${dir}: ${(err as Error).message}; check that HERALD_HOME is writable`,
      { code: "tool_error", cause: err },
    );
  }
}

/** Creates, finds and prunes workspaces under one root. */
export class WorkspaceManager {
  readonly rootDir: string;
  private readonly scope: "session" | "user";
  private readonly log: Logger;

  constructor(options: WorkspaceManagerOptions) {
    this.rootDir = options.rootDir;
    this.scope = options.scope ?? "session";
    this.log = options.logger ?? silentLogger();
  }

  /** The workspace of `owner`, without touching the disk. */
  workspaceFor(owner: WorkspaceOwner): Workspace {
    const key = this.scope === "user" ? (owner.userKey ?? owner.sessionKey) : owner.sessionKey;
    return { key, dir: join(this.rootDir, workspaceDirName(key)) };
  }

  /** Creates the workspace if needed and marks it used now (pruning counts age from the last use). */
  async ensure(owner: WorkspaceOwner): Promise<Workspace> {
    const workspace = this.workspaceFor(owner);
    await makeWorkspaceDir(workspace.dir, { touch: true });
    return workspace;
  }

  /** `resolveInside(workspace.dir, path)`: a host path inside the workspace, or `HeraldError`. */
  resolve(workspace: Workspace, path: string, options?: ResolveInsideOptions): string {
    return resolveInside(workspace.dir, path, options);
  }

  /**
   * Deletes workspaces not used for `olderThanMs` (by the directory's modification time), skipping
   * those for which `isBusy(dir)` is true (pass `ProcessRegistry.isBusy`). Returns the deleted paths.
   */
  async prune(olderThanMs: number, isBusy: (dir: string) => boolean): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.rootDir);
    } catch {
      return [];
    }
    const deleted: string[] = [];
    const cutoff = Date.now() - olderThanMs;
    for (const name of names) {
      const dir = join(this.rootDir, name);
      const info = await stat(dir).catch(() => undefined);
      if (!info?.isDirectory() || info.mtimeMs > cutoff) continue;
      if (isBusy(dir)) {
        this.log.debug({ dir }, "workspace busy, not pruned");
        continue;
      }
      await rm(dir, { recursive: true, force: true });
      deleted.push(dir);
    }
    if (deleted.length > 0) this.log.info({ count: deleted.length }, "workspaces pruned");
    return deleted;
  }
}

/** Builds a `WorkspaceManager`. */
export function createWorkspaceManager(options: WorkspaceManagerOptions): WorkspaceManager {
  return new WorkspaceManager(options);
}
