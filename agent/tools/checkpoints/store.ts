/**
 * `ShadowCheckpointStore`: the checkpoints of one workspace in a shadow git repository outside it
 * (`HERALD_HOME/checkpoints/<workspace>/`, which no command's sandbox mounts). Each checkpoint is a
 * commit of its own (no parent) under `refs/checkpoints/<epoch ms>-<random>`; the oldest past
 * `maxCount` are dropped and their objects pruned once they are an hour old (so a snapshot still being
 * written by another process keeps its objects). Snapshots are written by this process (snapshot.ts);
 * diffs compare two trees (`git diff`, never the work tree); a restore is `git read-tree -m -u`
 * (`-m`, from the current state's tree to the checkpoint's), which writes links as links, replaces a folder
 * that became a link instead of writing through it, and deletes only files the current state holds.
 * Operations on one store run one at a time.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { rename, rm, stat, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describeError, HeraldError } from "../../../core/errors.js";
import { type Logger, silentLogger } from "../../../core/logger.js";
import { git, initShadowRepo } from "./git.js";
import { readCommit, writeCommit } from "./objects.js";
import { type StatCache, snapshotTree, type TreeOutcome } from "./snapshot.js";
import type { CheckpointInfo, CheckpointLimits, SnapshotOutcome } from "./types.js";

/** Options of `ShadowCheckpointStore`. */
export interface CheckpointStoreOptions {
  readonly workspaceDir: string;
  /** The shadow repository (created on first use). */
  readonly gitDir: string;
  readonly limits: CheckpointLimits;
  readonly logger?: Logger | undefined;
  /** @defaultValue Date.now */
  readonly now?: (() => number) | undefined;
}

/** What `diff` found: the stat summary and the unified diff, each possibly cut at its cap. */
export interface CheckpointDiff {
  readonly checkpoint: CheckpointInfo;
  /** `git diff --stat --summary` (empty when nothing changed). */
  readonly stat: string;
  readonly patch: string;
  /** True when the unified diff was longer than the cap. */
  readonly cut: boolean;
}

/** What `restore` did. */
export interface RestoreOutcome {
  /** The checkpoint the workspace now matches. */
  readonly restored: CheckpointInfo;
  /** The state before the restore, saved as the newest checkpoint (undefined: it was one already). */
  readonly saved: CheckpointInfo | undefined;
}

const REFS = join("refs", "checkpoints");
/** The least time between two prunes of one repository's objects. */
const PRUNE_EVERY_MS = 3_600_000;

/** The checkpoints of one workspace; see the module comment. */
export class ShadowCheckpointStore {
  private readonly cache: StatCache = new Map();
  private tail: Promise<unknown> = Promise.resolve();
  private prunedAt = Number.NEGATIVE_INFINITY;
  private initialized = false;
  private readonly log: Logger;
  private readonly now: () => number;

  constructor(private readonly options: CheckpointStoreOptions) {
    this.log = options.logger ?? silentLogger();
    this.now = options.now ?? Date.now;
  }

  /** Takes a checkpoint labelled `label`, unless nothing changed since the latest. */
  snapshot(label: string): Promise<SnapshotOutcome> {
    return this.exclusive(async () => {
      const current = await this.currentTree();
      if (current.kind === "too-large") return current;
      const latest = this.refs()[0];
      const info = latest ? this.info(latest, 1) : undefined;
      if (info?.tree === current.tree) return { kind: "unchanged", checkpoint: info };
      const checkpoint = await this.commit(current.tree, label);
      const { skipped, skippedCount } = current;
      return { kind: "taken", checkpoint, skipped, skippedCount };
    });
  }

  /**
   * The checkpoints, newest first (`n` = 1 is the latest). Synchronous (a few small files), so a
   * command answers at once; a checkpoint being written by another process is either listed or not.
   */
  list(): CheckpointInfo[] {
    return this.refs().flatMap((ref, i) => {
      try {
        return [this.info(ref, i + 1)];
      } catch {
        return []; // dropped meanwhile
      }
    });
  }

  /**
   * What changed in the workspace since checkpoint `n`, the unified diff cut at `maxChars`.
   * @throws HeraldError `not_found` (no such checkpoint), `invalid_input` (the workspace is too large).
   */
  diff(n: number, maxChars: number): Promise<CheckpointDiff> {
    return this.exclusive(async () => {
      const checkpoint = this.checkpoint(n);
      const current = requireTree(await this.currentTree());
      const run = { gitDir: this.options.gitDir };
      const args = ["diff", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames"];
      const stat = await git([...args, "--stat=100,70", "--summary", checkpoint.tree, current.tree], {
        ...run,
        maxChars: 8000,
      });
      const patch = await git([...args, checkpoint.tree, current.tree], { ...run, maxChars });
      return { checkpoint, stat: stat.stdout.trimEnd(), patch: patch.stdout, cut: patch.cut };
    });
  }

  /**
   * Makes the workspace what it was at checkpoint `n`, after saving the current state as the newest
   * checkpoint. Files left out of checkpoints (too large) are neither deleted nor restored.
   * @throws HeraldError `not_found`, `invalid_input` (too large), `tool_error` (git failed).
   */
  restore(n: number, label = `before /rollback ${n}`): Promise<RestoreOutcome> {
    return this.exclusive(async () => {
      const restored = this.checkpoint(n);
      const current = requireTree(await this.currentTree());
      const latest = this.refs()[0];
      const latestTree = latest ? this.info(latest, 1).tree : undefined;
      const saved = latestTree === current.tree ? undefined : await this.commit(current.tree, label);
      if (current.tree !== restored.tree) await this.checkout(current.tree, restored.tree);
      this.cache.clear();
      return { restored: { ...restored, n: restored.n + (saved ? 1 : 0) }, saved };
    });
  }

  /** Runs `work` after every earlier operation of this store. */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.tail.then(work, work);
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async currentTree(): Promise<TreeOutcome> {
    // Housekeeping deletes the repository of a pruned workspace: a store kept meanwhile starts afresh.
    if (!this.initialized || !existsSync(join(this.options.gitDir, REFS))) {
      this.cache.clear();
      await initShadowRepo(this.options.gitDir);
    }
    this.initialized = true;
    return snapshotTree(this.options.workspaceDir, this.options.gitDir, this.cache, this.options.limits);
  }

  /** Ref names, newest first. */
  private refs(): string[] {
    let names: string[];
    try {
      names = readdirSync(join(this.options.gitDir, REFS));
    } catch {
      return [];
    }
    return names.filter((name) => /^\d{15}-[0-9a-f]{8}$/.test(name)).sort((a, b) => (a < b ? 1 : -1));
  }

  private info(ref: string, n: number): CheckpointInfo {
    const commit = readFileSync(join(this.options.gitDir, REFS, ref), "utf8").trim();
    const { tree, message } = readCommit(this.options.gitDir, commit);
    return { n, commit, tree, takenAt: Number.parseInt(ref, 10), label: message.split("\n")[0] ?? "" };
  }

  private checkpoint(n: number): CheckpointInfo {
    const refs = this.refs();
    const ref = refs[n - 1];
    if (!Number.isInteger(n) || n < 1 || !ref) {
      const have = refs.length === 0 ? "there are none yet" : `there are ${refs.length} (1 is the latest)`;
      throw new HeraldError(`no checkpoint ${n}: ${have}`, { code: "not_found" });
    }
    return this.info(ref, n);
  }

  /** Commits `tree` as the newest checkpoint, then drops those past the count. */
  private async commit(tree: string, label: string): Promise<CheckpointInfo> {
    const takenAt = this.now();
    const oneLine = label.split("\n")[0]?.trim().slice(0, 200) || "(no text)";
    const commit = await writeCommit(this.options.gitDir, tree, oneLine, takenAt);
    const ref = `${String(takenAt).padStart(15, "0")}-${randomBytes(4).toString("hex")}`;
    const path = join(this.options.gitDir, REFS, ref);
    await writeFile(`${path}.tmp`, `${commit}\n`, { mode: 0o600 });
    await rename(`${path}.tmp`, path);
    await this.trim();
    return { n: 1, commit, tree, takenAt, label: oneLine };
  }

  private async trim(): Promise<void> {
    const stale = this.refs().slice(this.options.limits.maxCount);
    if (stale.length === 0) return;
    for (const ref of stale) await unlink(join(this.options.gitDir, REFS, ref)).catch(() => undefined);
    // Objects of dropped checkpoints go once no ref holds them and they are an hour old: a prune more
    // often than hourly would find nothing more.
    const now = this.now();
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    void git(["prune", "--expire=1.hour.ago"], { gitDir: this.options.gitDir }).catch((err: unknown) =>
      this.log.warn({ error: describeError(err) }, "checkpoint objects not pruned"),
    );
  }

  /** Makes the work tree `to`, from a work tree that matches `from`. */
  private async checkout(from: string, to: string): Promise<void> {
    const { gitDir, workspaceDir } = this.options;
    const indexFile = join(gitDir, `restore-${randomBytes(4).toString("hex")}.index`);
    try {
      await git(["read-tree", from], { gitDir, indexFile });
      const run = { gitDir, indexFile, checkout: workspaceDir };
      // The index learns the files' stats (each compared with `from`'s content, nothing stored), so the
      // merge knows which files are as `from` has them. Files that differ only fail the merge below.
      await git(["update-index", "-q", "--refresh"], run).catch(() => undefined);
      // A two-tree merge touches only the files that differ; it refuses when one changed since `from`
      // was taken (a background process wrote it), and then every file is written as `to` has it.
      await git(["read-tree", "-m", "-u", from, to], run).catch(() =>
        git(["read-tree", "--reset", "-u", to], run),
      );
    } finally {
      await rm(indexFile, { force: true });
    }
    await handBack(workspaceDir);
  }
}

function requireTree(outcome: TreeOutcome): Extract<TreeOutcome, { kind: "tree" }> {
  if (outcome.kind === "tree") return outcome;
  throw new HeraldError(`${outcome.reason}; raise the checkpoints limits or delete files`, {
    code: "invalid_input",
  });
}

/**
 * A root gateway restores files as root: hand the workspace back to whoever owns its folder (the
 * sandbox's user), links themselves, never their targets.
 */
async function handBack(dir: string): Promise<void> {
  if (process.getuid?.() !== 0) return;
  const owner = await stat(dir);
  if (owner.uid === 0) return;
  await new Promise<void>((resolve, reject) => {
    const child = spawn("chown", ["-R", "-P", `${owner.uid}:${owner.gid}`, "--", dir], { stdio: "ignore" });
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0
        ? resolve()
        : reject(new HeraldError(`chown of ${dir} failed (exit ${code})`, { code: "tool_error" })),
    );
  });
}
