/**
 * Checkpoints of the agent's workspace and their rollback. Before a turn's first call of a tool that
 * may change the workspace (`Tool.changesWorkspace`: `terminal`, `process`, `write_file`, `patch`,
 * `execute_code`, `checkpoint_restore`), the workspace is snapshotted into a shadow git repository
 * outside it (`HERALD_HOME/checkpoints/<workspace>/`), labelled with the first line of the turn's user
 * text; nothing changed since the latest checkpoint: no new one. `/checkpoints` lists them, `/diff [n]`
 * shows what changed since one, `/rollback [n]` restores one; `checkpoint_restore` (toolset
 * "checkpoints", not offered unless a toolset list names it) lets the agent do the same. Only for
 * workspaces on this host (`local` and `sandbox` backends). When housekeeping prunes a workspace, its
 * repository goes with it (`removeCheckpoints`).
 */

export {
  type CheckpointsConfig,
  type CheckpointsGateway,
  createCheckpoints,
  DIFF_MAX_CHARS,
  formatList,
} from "./gateway.js";
export { type CheckpointsSection, checkpointsSectionSchema, checkpointsSettings } from "./settings.js";
export { type CheckpointDiff, type RestoreOutcome, ShadowCheckpointStore } from "./store.js";
export {
  CheckpointStores,
  checkpointRepoDir,
  checkpointsOff,
  LOCAL_BACKENDS,
  removeCheckpoints,
} from "./stores.js";
export { type Checkpointer, type CheckpointerPorts, createCheckpointer, turnLabel } from "./tool.js";
export type * from "./types.js";
export { DEFAULT_CHECKPOINT_LIMITS } from "./types.js";
