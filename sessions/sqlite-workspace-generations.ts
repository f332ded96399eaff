/**
 * The workspace hand-over's generations in `state.db` (table `workspace_generations`, migration v7):
 * per workspace its latest generation number, its manifest (JSON) and who pushed it. `update` reads
 * and writes in one transaction on the gateway's connection, so two workers' commits of one workspace
 * are numbered one after the other and neither is lost.
 */
import type Database from "better-sqlite3";

/** A manifest's entry as far as this table needs it (files name their blob). */
export interface GenerationEntry {
  readonly kind: string;
  readonly sha256?: string | undefined;
}

/** A stored generation. */
export interface GenerationRecord<M extends Record<string, GenerationEntry>> {
  readonly generation: number;
  readonly manifest: M;
  readonly totalBytes: number;
}

interface Row {
  generation: number;
  manifest: string;
  total_bytes: number;
}

/** See the module comment. */
export class SqliteWorkspaceGenerations<M extends Record<string, GenerationEntry>> {
  readonly #db: Database.Database;
  readonly #get: Database.Statement<[string], Row>;
  readonly #put: Database.Statement<[string, number, string, number, string, number]>;
  readonly #now: () => number;

  constructor(db: Database.Database, options: { now?: () => number } = {}) {
    this.#db = db;
    this.#now = options.now ?? Date.now;
    this.#get = db.prepare(
      "SELECT generation, manifest, total_bytes FROM workspace_generations WHERE workspace = ?",
    );
    this.#put = db.prepare(
      `INSERT INTO workspace_generations (workspace, generation, manifest, total_bytes, pushed_by, updated_at)
       VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (workspace) DO UPDATE SET generation = excluded.generation, manifest = excluded.manifest,
         total_bytes = excluded.total_bytes, pushed_by = excluded.pushed_by, updated_at = excluded.updated_at`,
    );
  }

  /** The latest generation of `workspace`, or undefined before its first commit. */
  get(workspace: string): GenerationRecord<M> | undefined {
    const row = this.#get.get(workspace);
    if (!row) return undefined;
    return {
      generation: row.generation,
      manifest: JSON.parse(row.manifest) as M,
      totalBytes: row.total_bytes,
    };
  }

  /** Replaces the latest generation with what `fn` makes of it, in one transaction; `fn` may throw. */
  update(
    workspace: string,
    fn: (current: GenerationRecord<M> | undefined) => GenerationRecord<M>,
    pushedBy: string,
  ): GenerationRecord<M> {
    return this.#db.transaction(() => {
      const next = fn(this.get(workspace));
      this.#put.run(
        workspace,
        next.generation,
        JSON.stringify(next.manifest),
        next.totalBytes,
        pushedBy,
        this.#now(),
      );
      return next;
    })();
  }

  /** Every blob hash a stored manifest names. */
  referencedBlobs(): Set<string> {
    const out = new Set<string>();
    for (const row of this.#db.prepare("SELECT manifest FROM workspace_generations").iterate()) {
      const manifest = JSON.parse((row as { manifest: string }).manifest) as M;
      for (const entry of Object.values(manifest)) if (entry.sha256) out.add(entry.sha256);
    }
    return out;
  }

  /** Deletes generations last pushed before `before` (epoch ms); returns how many. */
  forgetOlderThan(before: number): number {
    return this.#db.prepare("DELETE FROM workspace_generations WHERE updated_at < ?").run(before).changes;
  }
}
