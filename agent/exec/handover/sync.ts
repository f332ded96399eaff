/**
 * `WorkspaceHandover`: a worker's side. `pull` before a turn makes this worker's copy of the turn's
 * workspace the gateway's latest generation (one small request when it already holds it); `push`
 * after the turn sends what changed (only changed files' blobs the gateway lacks) as the next
 * generation. Turns of one workspace on this worker share the copy: only the first pulls, and pushes
 * run one at a time.
 */
import { createHash } from "node:crypto";
import { describeError, HeraldError } from "../../../core/errors.js";
import { type Logger, silentLogger } from "../../../core/logger.js";
import type { ExecutionBackend, Workspace, WorkspaceFiles } from "../types.js";
import { finishLines, planPull, prepareLines, runLines } from "./apply.js";
import { checkLinkTarget, checkManifest, diffManifests } from "./check.js";
import { folderIno, type LocalRecord, readRecord, writeRecord } from "./record.js";
import { type ScannedEntry, scanWorkspace } from "./scan.js";
import type { BlobSource, HandoverRemote, Manifest } from "./types.js";

/** Options of `WorkspaceHandover`. */
export interface WorkspaceHandoverOptions {
  readonly remote: HandoverRemote;
  readonly backend: ExecutionBackend;
  /** This worker's name, recorded with its commits. */
  readonly worker: string;
  /** Bytes of files one workspace may hold (the workspace quota). */
  readonly quotaBytes: number;
  /** Blobs per upload request, by bytes. @defaultValue 64 MiB */
  readonly uploadBatchBytes?: number | undefined;
  readonly logger?: Logger | undefined;
}

/** What `pull` did. */
export interface PullReport {
  readonly generation: number;
  /** False when this copy already was the latest generation (or another turn here holds it). */
  readonly pulled: boolean;
  readonly files: number;
  readonly bytes: number;
}

/** What `push` did. */
export interface PushReport {
  /** The generation the copy now is; undefined when nothing changed. */
  readonly generation: number | undefined;
  readonly files: number;
  readonly bytes: number;
  /** Paths left out: links out of the workspace, files larger than the quota. */
  readonly skipped: string[];
}

const READ_CHUNK = 4 * 1024 * 1024;

/** See the module comment. */
export class WorkspaceHandover {
  readonly #o: WorkspaceHandoverOptions;
  readonly #log: Logger;
  /** Turns running here per workspace folder. */
  readonly #holders = new Map<string, number>();
  /** The last push per workspace folder (pushes of one folder run in turn). */
  readonly #pushing = new Map<string, Promise<unknown>>();

  constructor(options: WorkspaceHandoverOptions) {
    this.#o = options;
    this.#log = options.logger ?? silentLogger();
  }

  /**
   * Makes the copy of `workspace` the latest generation (preparing it on the backend only when
   * something is to be written) and counts a turn in it until `release`.
   * @throws HeraldError when the gateway cannot be reached or sent a manifest that breaks the rules.
   */
  async pull(workspace: Workspace, signal?: AbortSignal): Promise<PullReport> {
    const held = this.#holders.get(workspace.dir) ?? 0;
    this.#holders.set(workspace.dir, held + 1);
    try {
      await this.#pushing.get(workspace.dir);
      const record = await readRecord(workspace.dir);
      // Another turn here holds the copy mid-turn: it is at least that turn's generation.
      if (held > 0) return { generation: record?.generation ?? 0, pulled: false, files: 0, bytes: 0 };
      const head = await this.#o.remote.head(nameOf(workspace), record?.generation ?? 0);
      if (!head.manifest) return { generation: head.generation, pulled: false, files: 0, bytes: 0 };
      checkManifest(head.manifest, { maxBytes: this.#o.quotaBytes });
      return await this.#apply(workspace, head.generation, head.manifest, record, signal);
    } catch (err) {
      this.release(workspace);
      throw err;
    }
  }

  /** Ends a turn's hold on `workspace` (without pushing). */
  release(workspace: Workspace): void {
    const held = (this.#holders.get(workspace.dir) ?? 1) - 1;
    if (held > 0) this.#holders.set(workspace.dir, held);
    else this.#holders.delete(workspace.dir);
  }

  async #apply(
    workspace: Workspace,
    generation: number,
    manifest: Manifest,
    record: LocalRecord | undefined,
    signal: AbortSignal | undefined,
  ): Promise<PullReport> {
    const { backend, remote } = this.#o;
    // Only now, when something is to be written: a chat turn on a current copy prepares nothing.
    await backend.prepare(workspace, signal);
    const plan = planPull(manifest, await scanWorkspace(workspace.dir), record);
    await runLines(backend, workspace, prepareLines(plan), signal);
    const files = backend.files(workspace);
    const byHash = new Map<string, string[]>();
    for (const [path, entry] of plan.files)
      byHash.set(entry.sha256, [...(byHash.get(entry.sha256) ?? []), path]);
    let bytes = 0;
    if (byHash.size > 0)
      await remote.download([...byHash.keys()], async (sha, data) => {
        for (const path of byHash.get(sha) ?? []) {
          const entry = manifest[path];
          await files.write(path, data, { mode: entry?.kind === "file" ? entry.mode : 0o644 });
          bytes += data.length;
        }
      });
    await runLines(backend, workspace, finishLines(plan), signal);
    await writeRecord(workspace.dir, await this.#recordOf(workspace, generation, manifest));
    this.#log.debug(
      { workspace: workspace.key, generation, files: plan.files.length, bytes },
      "workspace pulled",
    );
    return { generation, pulled: true, files: plan.files.length, bytes };
  }

  /** The record of a copy equal to `manifest`: each file's size and time as they are now. */
  async #recordOf(workspace: Workspace, generation: number, manifest: Manifest): Promise<LocalRecord> {
    const scan = await scanWorkspace(workspace.dir);
    const entries: LocalRecord["entries"] = {};
    for (const [path, entry] of Object.entries(manifest)) {
      const seen = scan.get(path);
      entries[path] =
        entry.kind === "file" && seen?.kind === "file"
          ? { entry, sizeBytes: seen.sizeBytes, mtimeMs: seen.mtimeMs }
          : { entry };
    }
    return { generation, ino: (await folderIno(workspace.dir)) ?? 0, entries };
  }

  /**
   * Sends what changed in `workspace` since the generation it holds as the next one, then ends the
   * turn's hold. Never throws: a failure is logged (the turn's writes stay in this copy and go with
   * the next push from here).
   */
  push(workspace: Workspace): Promise<PushReport | undefined> {
    const previous = this.#pushing.get(workspace.dir) ?? Promise.resolve();
    const run = previous
      .then(() => this.#push(workspace))
      .catch((err: unknown) => {
        this.#log.warn({ workspace: workspace.key, err: describeError(err) }, "workspace not handed over");
        return undefined;
      })
      .finally(() => {
        if (this.#pushing.get(workspace.dir) === run) this.#pushing.delete(workspace.dir);
        this.release(workspace);
      });
    this.#pushing.set(workspace.dir, run);
    return run;
  }

  async #push(workspace: Workspace): Promise<PushReport> {
    const record = await readRecord(workspace.dir);
    const scan = await scanWorkspace(workspace.dir);
    if (scan.size > 0) await this.#o.backend.prepare(workspace);
    const files = this.#o.backend.files(workspace);
    const { manifest, skipped } = await this.#manifestOf(scan, record, files);
    const base = record?.generation ?? 0;
    const known: Manifest = {};
    for (const [path, { entry }] of Object.entries(record?.entries ?? {})) known[path] = entry;
    const changes = diffManifests(known, manifest);
    if (Object.keys(changes.set).length === 0 && changes.removed.length === 0)
      return { generation: undefined, files: 0, bytes: 0, skipped };
    checkManifest(manifest, { maxBytes: this.#o.quotaBytes });
    const { files: sent, bytes } = await this.#upload(changes.set, files);
    const outcome = await this.#o.remote.commit(nameOf(workspace), base, changes, this.#o.worker);
    const generation = outcome.fastForward ? outcome.generation : base;
    await writeRecord(workspace.dir, await this.#recordOf(workspace, generation, manifest));
    this.#log.debug(
      { workspace: workspace.key, generation: outcome.generation, sent, bytes },
      "workspace pushed",
    );
    return { generation: outcome.generation, files: sent, bytes, skipped };
  }

  /** The manifest of the copy as scanned: unchanged files keep the record's hash, others are hashed. */
  async #manifestOf(
    scan: Map<string, ScannedEntry>,
    record: LocalRecord | undefined,
    files: WorkspaceFiles,
  ): Promise<{ manifest: Manifest; skipped: string[] }> {
    const manifest: Manifest = {};
    const skipped: string[] = [];
    for (const [path, seen] of scan) {
      if (seen.kind === "dir") manifest[path] = { kind: "dir", mode: seen.mode };
      else if (seen.kind === "link") {
        if (linkInside(path, seen.target)) manifest[path] = { kind: "link", target: seen.target };
        else skipped.push(path);
      } else if (seen.sizeBytes > this.#o.quotaBytes) skipped.push(path);
      else {
        const known = record?.entries[path];
        const same =
          known?.entry.kind === "file" &&
          known.sizeBytes === seen.sizeBytes &&
          known.mtimeMs === seen.mtimeMs;
        const sha256 =
          same && known.entry.kind === "file"
            ? known.entry.sha256
            : await hashOf(files, path, seen.sizeBytes);
        manifest[path] = { kind: "file", sha256, sizeBytes: seen.sizeBytes, mode: seen.mode };
      }
    }
    // A path below a skipped link or inside nothing cannot be below a file: the scan never descends those.
    return { manifest, skipped };
  }

  /** Uploads the blobs of `set` the gateway lacks, in batches. */
  async #upload(set: Manifest, files: WorkspaceFiles): Promise<{ files: number; bytes: number }> {
    const paths = new Map<string, { path: string; size: number }>();
    for (const [path, entry] of Object.entries(set))
      if (entry.kind === "file") paths.set(entry.sha256, { path, size: entry.sizeBytes });
    const missing = paths.size ? await this.#o.remote.missing([...paths.keys()]) : [];
    const batchBytes = this.#o.uploadBatchBytes ?? 64 * 1024 * 1024;
    let batch: BlobSource[] = [];
    let size = 0;
    let bytes = 0;
    for (const sha256 of missing) {
      const { path, size: sizeBytes } = paths.get(sha256) as { path: string; size: number };
      batch.push({ sha256, sizeBytes, read: () => readWhole(files, path, sizeBytes, sha256) });
      size += sizeBytes;
      bytes += sizeBytes;
      if (size >= batchBytes) {
        await this.#o.remote.upload(batch);
        batch = [];
        size = 0;
      }
    }
    if (batch.length) await this.#o.remote.upload(batch);
    return { files: missing.length, bytes };
  }
}

/** The workspace's name at the gateway: its folder's name. */
function nameOf(workspace: Workspace): string {
  return workspace.dir.split("/").pop() ?? workspace.dir;
}

function linkInside(path: string, target: string): boolean {
  try {
    checkLinkTarget(path, target);
    return true;
  } catch {
    return false;
  }
}

async function hashOf(files: WorkspaceFiles, path: string, sizeBytes: number): Promise<string> {
  const hash = createHash("sha256");
  for (let offset = 0; offset < sizeBytes; offset += READ_CHUNK) {
    const chunk = await files.read(path, { offset, length: Math.min(READ_CHUNK, sizeBytes - offset) });
    if (chunk.length === 0) break;
    hash.update(chunk);
  }
  return hash.digest("hex");
}

/** The whole file, checked against the hash it was listed with (it changed meanwhile: refused). */
async function readWhole(
  files: WorkspaceFiles,
  path: string,
  sizeBytes: number,
  sha256: string,
): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for (let offset = 0; offset < sizeBytes; offset += READ_CHUNK) {
    const chunk = await files.read(path, { offset, length: Math.min(READ_CHUNK, sizeBytes - offset) });
    if (chunk.length === 0) break;
    chunks.push(chunk);
  }
  const data = Buffer.concat(chunks);
  if (createHash("sha256").update(data).digest("hex") !== sha256)
    throw new HeraldError(`${path} changed while it was handed over; the next push sends it`, {
      code: "tool_error",
      retryable: true,
    });
  return data;
}
