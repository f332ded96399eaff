/**
 * `CheckpointStores`: the checkpoint store of each workspace of a process, by workspace, kept for reuse
 * (their stat caches make an unchanged workspace cheap to check). The gateway (commands) and the
 * process that runs turns (snapshots) each hold one; they share the repositories on disk.
 */
import { rm } from "node:fs/promises";
import { basename, join } from "node:path";
import type { Logger } from "../../../core/logger.js";
import type { BackendName, Workspace } from "../../exec/index.js";
import type { CheckpointsSection } from "./settings.js";
import { ShadowCheckpointStore } from "./store.js";

/** Stores kept at once; the least recently used goes first. */
const KEPT = 64;

/** The backends whose workspace is a folder on this host, the only ones checkpoints work on. */
export const LOCAL_BACKENDS: readonly BackendName[] = ["local", "sandbox"];

/**
 * Why checkpoints are off for this configuration, or undefined when they are on: the user-phrased
 * sentence the commands answer with.
 */
export function checkpointsOff(section: CheckpointsSection, backend: BackendName): string | undefined {
  if (!section.enabled) return "Checkpoints are off here (checkpoints.enabled: false).";
  if (!LOCAL_BACKENDS.includes(backend))
    return `Checkpoints need a workspace on this host (exec.backend local or sandbox); the ${backend} backend keeps it elsewhere.`;
  return undefined;
}

/** The shadow repository of the workspace `workspaceDir`: `HERALD_HOME/checkpoints/<its folder name>`. */
export function checkpointRepoDir(homeDir: string, workspaceDir: string): string {
  return join(homeDir, "checkpoints", basename(workspaceDir));
}

/**
 * Deletes the checkpoints of the workspace `workspaceDir` (housekeeping pruned it): nothing is left to
 * restore them into. A repository that is not there is no error. @throws what `rm` throws otherwise.
 */
export async function removeCheckpoints(homeDir: string, workspaceDir: string): Promise<void> {
  await rm(checkpointRepoDir(homeDir, workspaceDir), { recursive: true, force: true });
}

/** The checkpoint stores of one process. */
export class CheckpointStores {
  private readonly stores = new Map<string, ShadowCheckpointStore>();

  constructor(
    private readonly homeDir: string,
    private readonly section: CheckpointsSection,
    private readonly logger: Logger,
  ) {}

  /** The store of `workspace`: `HERALD_HOME/checkpoints/<the workspace's folder name>`. */
  of(workspace: Workspace): ShadowCheckpointStore {
    const name = basename(workspace.dir);
    const kept = this.stores.get(name);
    if (kept) {
      this.stores.delete(name);
      this.stores.set(name, kept);
      return kept;
    }
    const { maxCount, maxFileBytes, maxTotalBytes, maxFiles } = this.section;
    const store = new ShadowCheckpointStore({
      workspaceDir: workspace.dir,
      gitDir: checkpointRepoDir(this.homeDir, workspace.dir),
      limits: { maxCount, maxFileBytes, maxTotalBytes, maxFiles },
      logger: this.logger,
    });
    this.stores.set(name, store);
    if (this.stores.size > KEPT) this.stores.delete(this.stores.keys().next().value as string);
    return store;
  }
}
