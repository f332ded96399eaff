/**
 * Where commands run: the execution backends (local, bubblewrap sandbox, ssh, docker, and the cloud
 * sandboxes of Daytona, E2B, Modal and Vercel behind one `CloudBackend` with a driver per provider,
 * whose SDK loads on first use) built from configuration by `createExecutionBackend`, the workspaces and their files (read and written where the
 * commands run), the quota, background processes, and the housekeeping of workspaces and the cache.
 */
export { type OpenWorkspace, WorkspaceAccess, type WorkspaceAccessOptions } from "./access.js";
export { writeFileAtomic } from "./atomic-write.js";
export { copyAttachments, ownerOf } from "./attachments.js";
export {
  backendFactories,
  createExecutionBackend,
  type ExecOptions,
  type ExecOptionsInput,
  execOptionsSchema,
  parseExecOptions,
} from "./backend.js";
export { shellQuote } from "./child.js";
export { CloudBackend, type CloudBackendOptions, createCloudBackend } from "./cloud.js";
export { DEFAULT_WORKDIRS } from "./cloud-config.js";
export { readSandboxRecord, type SandboxRecord, sandboxHours } from "./cloud-records.js";
export type { CloudProviderName, CloudSandboxDriver } from "./cloud-types.js";
export { type SandboxUsageSettings, sandboxUsage, sandboxUsageLine } from "./cloud-usage.js";
export { createDockerBackend, DockerBackend, type DockerBackendOptions } from "./docker.js";
export { HelperWorkspaceFiles } from "./files-helper.js";
export { LocalWorkspaceFiles } from "./files-local.js";
export { ShellWorkspaceFiles } from "./files-shell.js";
export {
  type BusyWorkspaces,
  type HousekeepingOptions,
  type HousekeepingReport,
  type HousekeepingSettings,
  runHousekeeping,
  startHousekeeping,
  startWorkspaceHeartbeat,
  WORKER_CACHE_FOLDERS,
  WORKSPACE_HEARTBEAT_MS,
  type WorkspaceHousekeeping,
  workerHousekeeping,
  workspaceHousekeeping,
} from "./housekeeping.js";
export { createLocalBackend, LocalBackend, type LocalBackendOptions } from "./local.js";
export { type WorkspacePathOptions, workspacePath } from "./paths.js";
export {
  type LogPage,
  type PollResult,
  type ProcessInfo,
  ProcessRegistry,
  type ProcessRegistryOptions,
} from "./processes.js";
export { type PruneFilesOptions, type PruneFilesReport, pruneOldFiles } from "./prune-files.js";
export { QuotaExceededError, WorkspaceQuota, type WorkspaceUsage } from "./quota.js";
export { type RunOptions, type RunResult, runCommand, terminate } from "./run.js";
export {
  bwrapArgs,
  createSandboxBackend,
  DEFAULT_SANDBOX_UID,
  SANDBOX_WORKSPACE,
  SandboxBackend,
  type SandboxBackendOptions,
} from "./sandbox.js";
export { type Execution, openExecution } from "./setup.js";
export { createSshBackend, SshBackend, type SshBackendOptions } from "./ssh.js";
export type * from "./types.js";
export { BACKEND_NAMES, DEFAULT_LIMITS, DEFAULT_PATH } from "./types.js";
export {
  createWorkspaceManager,
  type PruneWorkspacesOptions,
  resolveInside,
  WorkspaceManager,
  type WorkspaceManagerOptions,
  type WorkspaceOwner,
  type WorkspaceRootSettings,
  workspaceDirName,
  workspaceRoots,
} from "./workspaces.js";
