/**
 * Workspace hand-over between workers (Redis): a session's workspace is reachable by every worker.
 *
 * Design. The gateway holds each workspace's latest *generation*: a manifest (path → file hash and
 * mode, folder, or link inside the workspace) and a number, in `state.db` (`workspace_generations`),
 * with the file contents as content-addressed blobs under its `HERALD_HOME/workspace-store/`. A worker
 * keeps a record of the generation its own copy holds (`workspaces/.handover/<name>.json`). Before a
 * turn it asks the gateway for the latest generation, sending the one it holds: when they match (the
 * session's previous turn ran here: affinity for free) the answer is a number and nothing moves;
 * otherwise it gets the manifest, downloads only the blobs it lacks and makes its copy equal. After a
 * turn that called a tool it scans the copy, hashes only files whose size or time changed, uploads
 * only blobs the gateway lacks, and commits the changes as the next generation.
 *
 * Why this and not a tarball per generation or a shared file system: the per-file store moves only
 * what changed in both directions (a turn that edits one file of a cloned repository sends one file),
 * and unchanged files are stored once however many generations name them; a commit is one SQLite
 * transaction on the gateway, the one writer of `state.db`, so two workers committing one workspace
 * (a parent and its `delegate_task` children) are numbered in turn and merged path by path (the later
 * writer wins a path) instead of one losing the other's files. No new service is needed: workers
 * already reach the gateway with `HERALD_GATEWAY_KEY`. A worker killed mid-turn loses that turn's
 * writes only: the last committed generation is what the next worker pulls.
 *
 * Security: the routes take the state API's key; blobs travel as tar entries named by their SHA-256
 * and are refused unless they are plain files whose content matches the name (no `..`, no absolute
 * name, no link, no device), under size caps (blob-tar.ts); manifests are refused whole for a path
 * with `..`, `.`, an empty segment or a leading `/`, a link out of the workspace, a path below a file
 * or link, or more bytes than the workspace quota (check.ts), by the gateway on commit and by the
 * worker on pull; a pull writes through the backend, as the workspace's commands would (apply.ts).
 *
 * Background processes do not move: they stay on the worker that started them, and their ids name
 * that worker, so `process` on another worker says where the process runs and that it cannot be
 * reached from there. The embedded queue (no `REDIS_URL`) builds none of this: no request, no scan.
 */
export { type BlobArchiveLimits, packBlobs, unpackBlobs } from "./blob-tar.js";
export { applyChanges, checkEntryPath, checkLinkTarget, checkManifest, diffManifests } from "./check.js";
export { withHandover } from "./handler.js";
export { HANDOVER_API_PATH, HttpHandoverRemote, type HttpHandoverRemoteOptions } from "./http-remote.js";
export { checkWorkspaceName, WorkspaceHub, type WorkspaceHubOptions } from "./hub.js";
export { forgetRecord, RECORD_DIR } from "./record.js";
export {
  type PullReport,
  type PushReport,
  WorkspaceHandover,
  type WorkspaceHandoverOptions,
} from "./sync.js";
export type * from "./types.js";
export { blobListSchema, commitSchema, manifestSchema } from "./types.js";
