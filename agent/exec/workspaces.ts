/**
 * Workspaces: one directory per session key (or per user) under a root: `HERALD_HOME/workspaces/` for
 * the default agent, `agents/<name>/workspaces/` (or its `workspace_root`) for a further agent, whose
 * name leads its keys. Directory names are derived from keys safely (chat keys contain ':' and '@').
 *
 * A workspace's last use is recorded in a file of its own beside the workspaces, out of reach of the
 * commands that run in it (`.last-used/<name>`): a turn marks it whenever it uses the workspace, and
 * the process that runs a background process there marks it every few minutes (housekeeping.ts).
 * The folder's own modification time counts too (workspaces older than the record have only that), but
 * alone it is not enough: `tar x` of an archive holding `./`, `cp -a` or `touch -d` set it to the past.
 * `prune` deletes workspaces whose last use is older than the retention, so several processes sharing
 * the root (workers sharing HERALD_HOME) each prune safely: one whose background process runs keeps
 * the record fresh for all of them.
 */
import { createHash, randomBytes } from "node:crypto";
import { lstat, mkdir, readdir, rename, rm, stat, unlink, utimes, writeFile } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { agentOfKey } from "../../core/chat.js";
import { describeError, HeraldError } from "../../core/errors.js";
import { type Logger, silentLogger } from "../../core/logger.js";
import { forgetRecord } from "./handover/record.js";
import type { Workspace } from "./types.js";

export { resolveInside } from "./paths.js";

/** Under the root: one empty file per workspace, modified at its last use. */
const USED_DIR = ".last-used";
/** Under the root: workspaces being deleted, renamed here first (`<epoch ms>-<random>-<name>`). */
const TRASH_DIR = ".trash";
/** A trash entry this old was left by a pass that died mid-delete; the next pass removes it. */
const TRASH_LEFTOVER_MS = 3_600_000;

/** Options of `WorkspaceManager`. */
export interface WorkspaceManagerOptions {
  /** Where the default agent's workspaces live: `HERALD_HOME/workspaces`. */
  readonly rootDir: string;
  /** Where each further agent's live, by agent name (see {@link workspaceRoots}). @defaultValue none */
  readonly agentRoots?: ReadonlyMap<string, string> | undefined;
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
 * keys never share a directory and the name still says whose it is. Never starts with a dot: those
 * entries of the root are the manager's own.
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
 * Creates a workspace directory (owner-only) if it is missing.
 * @throws HeraldError `tool_error` naming the directory and the fix.
 */
export async function makeWorkspaceDir(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new HeraldError(
      `cannot create the workspace ${dir}: ${(err as Error).message}; check that HERALD_HOME is writable`,
      { code: "tool_error", cause: err },
    );
  }
}

/** The settings the workspace roots are read from (`HeraldConfig` has this shape). */
export interface WorkspaceRootSettings {
  homeDir: string;
  agents: readonly { name: string; workspaceRoot?: string | undefined }[];
}

/**
 * The workspace roots: the default agent's `HERALD_HOME/workspaces`, and each further agent's
 * `workspace_root` (relative to HERALD_HOME), else `agents/<name>/workspaces`.
 */
export function workspaceRoots(
  config: WorkspaceRootSettings,
): Pick<WorkspaceManagerOptions, "rootDir" | "agentRoots"> & { agentRoots: Map<string, string> } {
  const at = (path: string) => (isAbsolute(path) ? path : join(config.homeDir, path));
  return {
    rootDir: join(config.homeDir, "workspaces"),
    agentRoots: new Map(
      config.agents.map((a) => [
        a.name,
        resolve(a.workspaceRoot ? at(a.workspaceRoot) : join(config.homeDir, "agents", a.name, "workspaces")),
      ]),
    ),
  };
}

/** Options of {@link WorkspaceManager.prune}. */
export interface PruneWorkspacesOptions {
  /** @defaultValue Date.now() */
  now?: number | undefined;
}

/** Creates, finds and prunes workspaces under each agent's root. */
export class WorkspaceManager {
  /** The default agent's root. */
  readonly rootDir: string;
  private readonly agentRoots: ReadonlyMap<string, string>;
  private readonly scope: "session" | "user";
  private readonly log: Logger;

  constructor(options: WorkspaceManagerOptions) {
    this.rootDir = options.rootDir;
    this.agentRoots = options.agentRoots ?? new Map();
    this.scope = options.scope ?? "session";
    this.log = options.logger ?? silentLogger();
  }

  /** Every root, the default agent's first (agents sharing one are listed once). */
  get roots(): string[] {
    return [...new Set([resolve(this.rootDir), ...[...this.agentRoots.values()].map((r) => resolve(r))])];
  }

  /** The root of the agent a workspace key names (its prefix); the default agent's for the others. */
  rootFor(key: string): string {
    const agent = agentOfKey(key);
    return (agent && this.agentRoots.get(agent)) || this.rootDir;
  }

  /** The workspace of `owner`, without touching the disk. */
  workspaceFor(owner: WorkspaceOwner): Workspace {
    const key = this.scope === "user" ? (owner.userKey ?? owner.sessionKey) : owner.sessionKey;
    return { key, dir: join(this.rootFor(key), workspaceDirName(key)) };
  }

  /**
   * Creates the workspace if needed and marks it used now (pruning counts age from the last use).
   * @throws HeraldError `tool_error` when either cannot be written.
   */
  async ensure(owner: WorkspaceOwner): Promise<Workspace> {
    const workspace = this.workspaceFor(owner);
    await makeWorkspaceDir(workspace.dir);
    try {
      await this.markUsed(workspace.dir);
    } catch (err) {
      throw new HeraldError(
        `cannot record the use of the workspace ${workspace.dir}: ${(err as Error).message}; check that HERALD_HOME is writable`,
        { code: "tool_error", cause: err },
      );
    }
    return workspace;
  }

  /** The file whose modification time records the last use of the workspace `dir` (beside it). */
  usedMarker(dir: string): string {
    return join(dirname(dir), USED_DIR, basename(dir));
  }

  /**
   * Records that the workspace `dir` is in use now. A `dir` outside the roots is ignored.
   * @throws the file system's error when the record cannot be written.
   */
  async markUsed(dir: string): Promise<void> {
    if (!this.roots.includes(dirname(resolve(dir)))) return;
    const marker = this.usedMarker(dir);
    const now = new Date();
    try {
      await utimes(marker, now, now);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      await mkdir(dirname(marker), { recursive: true, mode: 0o700 });
      await writeFile(marker, "");
    }
  }

  /**
   * When the workspace `dir` was last used (epoch ms): the later of its record and the folder's own
   * modification time. Undefined when `dir` is not a directory (missing, or a symbolic link).
   */
  async lastUsedAt(dir: string): Promise<number | undefined> {
    const info = await lstat(dir).catch(() => undefined);
    if (!info?.isDirectory()) return undefined;
    const marker = await stat(this.usedMarker(dir)).catch(() => undefined);
    return Math.max(info.mtimeMs, marker?.mtimeMs ?? 0);
  }

  /**
   * Deletes workspaces last used more than `olderThanMs` ago ({@link lastUsedAt}) under every root,
   * as {@link pruneRoot} does for one. Never throws.
   */
  async prune(
    olderThanMs: number,
    isBusy: (dir: string) => boolean,
    options: PruneWorkspacesOptions = {},
  ): Promise<string[]> {
    const deleted: string[] = [];
    for (const root of this.roots)
      deleted.push(...(await this.pruneRoot(root, olderThanMs, isBusy, options)));
    if (deleted.length > 0) this.log.info({ count: deleted.length }, "workspaces pruned");
    return deleted;
  }

  /**
   * Deletes workspaces under `root` last used more than `olderThanMs` ago, skipping those for
   * which `isBusy(dir)` is true (pass `ProcessRegistry.isBusy`). Returns the paths it deleted. Each is
   * renamed into the root's trash before it is removed, so of passes running at once (workers sharing
   * the root) one deletes it and the others skip it, and a turn that starts meanwhile gets a new, empty
   * workspace rather than a half-deleted one. Never throws: what cannot be read or removed is logged and
   * left for the next pass, which also removes leftovers of passes that died mid-delete.
   */
  private async pruneRoot(
    root: string,
    olderThanMs: number,
    isBusy: (dir: string) => boolean,
    options: PruneWorkspacesOptions,
  ): Promise<string[]> {
    const now = options.now ?? Date.now();
    const cutoff = now - olderThanMs;
    const trash = join(root, TRASH_DIR);
    let names: string[];
    try {
      names = await readdir(root);
    } catch {
      return [];
    }
    const deleted: string[] = [];
    for (const name of names) {
      if (name.startsWith(".")) continue; // the manager's own: records and trash
      const dir = join(root, name);
      const lastUsed = await this.lastUsedAt(dir);
      if (lastUsed === undefined || lastUsed > cutoff) continue;
      if (isBusy(dir)) {
        this.log.debug({ dir }, "workspace busy, not pruned");
        continue;
      }
      const doomed = join(trash, `${now}-${randomBytes(4).toString("hex")}-${name}`);
      try {
        await mkdir(trash, { recursive: true, mode: 0o700 });
        await rename(dir, doomed);
      } catch (err) {
        // ENOENT: another pass took it first.
        if ((err as NodeJS.ErrnoException).code !== "ENOENT")
          this.log.warn({ dir, error: describeError(err) }, "workspace not pruned");
        continue;
      }
      deleted.push(dir);
      // A turn that recreated the workspace meanwhile has a new folder, fresh by its own time.
      await unlink(this.usedMarker(dir)).catch(() => undefined);
      await forgetRecord(dir);
      await this.remove(doomed);
    }
    await this.removeLeftovers(root, now - TRASH_LEFTOVER_MS, cutoff);
    return deleted;
  }

  /** Removes a renamed workspace; a failure is logged, and the next pass finds it as a leftover. */
  private async remove(path: string): Promise<void> {
    try {
      await rm(path, { recursive: true, force: true });
    } catch (err) {
      this.log.warn({ path, error: describeError(err) }, "pruned workspace not fully removed");
    }
  }

  /**
   * Trash entries renamed before `trashCutoff` (a pass died before removing them; younger ones may be
   * another pass's, still at work), and records older than `usedCutoff` whose workspace is gone.
   */
  private async removeLeftovers(root: string, trashCutoff: number, usedCutoff: number): Promise<void> {
    const trash = join(root, TRASH_DIR);
    for (const name of await readdir(trash).catch(() => [])) {
      const renamedAt = Number.parseInt(name, 10);
      if (!(renamedAt > trashCutoff)) await this.remove(join(trash, name));
    }
    const used = join(root, USED_DIR);
    for (const name of await readdir(used).catch(() => [])) {
      const marker = join(used, name);
      const info = await stat(marker).catch(() => undefined);
      if (!info || info.mtimeMs > usedCutoff) continue;
      if (await lstat(join(root, name)).catch(() => undefined)) continue;
      await unlink(marker).catch(() => undefined);
    }
  }
}

/** Builds a `WorkspaceManager`. */
export function createWorkspaceManager(options: WorkspaceManagerOptions): WorkspaceManager {
  return new WorkspaceManager(options);
}
