/**
 * `WorkspaceHub`: the gateway's side of the hand-over. Blobs live in `HERALD_HOME/workspace-store/`
 * (`<2 hex>/<sha256>`, written to a temporary file and renamed, so a reader never sees half a blob);
 * each workspace's latest generation (number and manifest) lives in the `GenerationStore` (`state.db`).
 * A commit checks the result against the manifest rules and the quota and that every blob it names is
 * held, then stores it as the next generation in one transaction. Unreferenced blobs and generations
 * nobody pushed for the retention are swept by `sweep`.
 */
import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, readdir, rename, rmdir, stat, unlink, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { HeraldError } from "../../../core/errors.js";
import { type Logger, silentLogger } from "../../../core/logger.js";
import { unpackBlobs } from "./blob-tar.js";
import { applyChanges, checkManifest } from "./check.js";
import type { CommitOutcome, GenerationHead, GenerationStore, ManifestChanges } from "./types.js";

/** Options of `WorkspaceHub`. */
export interface WorkspaceHubOptions {
  /** Where blobs live: `HERALD_HOME/workspace-store`. */
  readonly dir: string;
  readonly generations: GenerationStore;
  /** Bytes of files one workspace may hold (the workspace quota). */
  readonly quotaBytes: number;
  readonly logger?: Logger | undefined;
}

/** A workspace name as `workspaceDirName` makes them. */
const NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$/;

/** Throws `invalid_input` unless `name` is a workspace folder's name. */
export function checkWorkspaceName(name: string): void {
  if (!NAME.test(name))
    throw new HeraldError(`"${name.slice(0, 100)}" is not a workspace name`, { code: "invalid_input" });
}

/** The gateway's store of workspace generations; see the module comment. */
export class WorkspaceHub {
  readonly #dir: string;
  readonly #generations: GenerationStore;
  readonly #quotaBytes: number;
  readonly #log: Logger;

  constructor(options: WorkspaceHubOptions) {
    this.#dir = options.dir;
    this.#generations = options.generations;
    this.#quotaBytes = options.quotaBytes;
    this.#log = options.logger ?? silentLogger();
  }

  /** The largest blob accepted: the quota (a workspace holds no larger file). */
  get maxBlobBytes(): number {
    return this.#quotaBytes;
  }

  #path(sha256: string): string {
    return join(this.#dir, sha256.slice(0, 2), sha256);
  }

  /** The latest generation of `workspace`; the manifest only when `have` is not that generation. */
  head(workspace: string, have?: number): GenerationHead {
    checkWorkspaceName(workspace);
    const current = this.#generations.get(workspace);
    const generation = current?.generation ?? 0;
    if (have === generation) return { generation };
    return { generation, manifest: current?.manifest ?? {} };
  }

  /**
   * Of `sha256s`, those not held. Those held are marked fresh, so a sweep before the commit that will
   * name them leaves them.
   */
  async missing(sha256s: readonly string[]): Promise<string[]> {
    const out: string[] = [];
    const now = new Date();
    for (const sha of new Set(sha256s)) {
      if (await this.#has(sha)) await utimes(this.#path(sha), now, now).catch(() => undefined);
      else out.push(sha);
    }
    return out;
  }

  async #has(sha256: string): Promise<boolean> {
    return (await stat(this.#path(sha256)).catch(() => undefined))?.isFile() ?? false;
  }

  /**
   * Stores the blobs of a tar (blob-tar.ts); resolves with how many.
   * @throws HeraldError `invalid_input` for a hostile or oversized archive (nothing of it is referenced
   * until a commit names it, and the sweep removes what no commit does).
   */
  receive(input: Readable, maxTotalBytes: number): Promise<number> {
    return unpackBlobs(input, { maxBlobBytes: this.maxBlobBytes, maxTotalBytes }, async (sha, data) => {
      const path = this.#path(sha);
      if (await this.#has(sha)) return;
      await mkdir(join(this.#dir, sha.slice(0, 2)), { recursive: true, mode: 0o700 });
      const temp = `${path}.${randomBytes(4).toString("hex")}.tmp`;
      await writeFile(temp, data, { mode: 0o600 });
      await rename(temp, path);
    });
  }

  /** The held blobs of `sha256s` as sources for `packBlobs`. @throws `not_found` for one not held. */
  async sources(sha256s: readonly string[]) {
    const out = [];
    for (const sha of new Set(sha256s)) {
      const info = await stat(this.#path(sha)).catch(() => undefined);
      if (!info?.isFile()) throw new HeraldError(`no blob ${sha} is held`, { code: "not_found" });
      const path = this.#path(sha);
      out.push({ sha256: sha, sizeBytes: info.size, read: () => readAll(path) });
    }
    return out;
  }

  /**
   * Makes the next generation of `workspace`: `changes` applied to the latest one, path by path.
   * @throws HeraldError `invalid_input` when the result breaks a manifest rule or the quota, or names
   * a blob not held.
   */
  async commit(
    workspace: string,
    base: number,
    changes: ManifestChanges,
    worker: string,
  ): Promise<CommitOutcome> {
    checkWorkspaceName(workspace);
    const blobs = Object.values(changes.set).flatMap((e) => (e.kind === "file" ? [e.sha256] : []));
    const absent = await this.missing(blobs);
    if (absent.length > 0)
      throw new HeraldError(`the commit names ${absent.length} blobs not uploaded (${absent[0]}…)`, {
        code: "invalid_input",
      });
    let fastForward = false;
    const stored = this.#generations.update(
      workspace,
      (current) => {
        const generation = current?.generation ?? 0;
        fastForward = generation === base;
        const manifest = applyChanges(current?.manifest ?? {}, changes);
        const totalBytes = checkManifest(manifest, { maxBytes: this.#quotaBytes });
        return { generation: generation + 1, manifest, totalBytes };
      },
      worker,
    );
    this.#log.debug({ workspace, generation: stored.generation, worker, fastForward }, "workspace committed");
    return { generation: stored.generation, fastForward };
  }

  /**
   * Forgets generations not pushed for `retentionMs` and deletes blobs that no generation names and
   * that are older than `graceMs` (younger ones may belong to a commit on its way). Never throws.
   */
  async sweep(retentionMs: number, graceMs = 3_600_000, now = Date.now()): Promise<{ blobs: number }> {
    const forgotten = this.#generations.forgetOlderThan(now - retentionMs);
    const keep = this.#generations.referencedBlobs();
    let blobs = 0;
    for (const folder of await readdir(this.#dir).catch(() => [] as string[])) {
      for (const name of await readdir(join(this.#dir, folder)).catch(() => [] as string[])) {
        if (keep.has(name)) continue;
        const path = join(this.#dir, folder, name);
        const info = await stat(path).catch(() => undefined);
        if (!info || info.mtimeMs > now - graceMs) continue;
        await unlink(path).then(
          () => blobs++,
          () => undefined,
        );
      }
      await rmdir(join(this.#dir, folder)).catch(() => undefined);
    }
    if (forgotten || blobs) this.#log.info({ generations: forgotten, blobs }, "workspace store swept");
    return { blobs };
  }
}

async function readAll(path: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of createReadStream(path)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
