/**
 * The cost of checkpoints on a workspace of many small files: the first checkpoint (every file hashed
 * and stored), the check that finds nothing changed (what every turn that changes the workspace pays
 * first; target ≤ 50 ms for 1,000 files), the same in a fresh process (no stat cache: every file read
 * again, nothing written), a checkpoint after one file changed, a diff and a rollback.
 */
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_CHECKPOINT_LIMITS, ShadowCheckpointStore } from "../agent/tools/checkpoints/index.js";
import { machineLine, percentile, round } from "./lib.js";

export interface CheckpointsBenchOptions {
  /** Workspace sizes, in files (20 per folder, 1–4 KB each). */
  sizes: number[];
  /** Runs of each repeated figure. */
  runs: number;
}

export interface CheckpointsBenchRow {
  files: number;
  /** The machine's 1-minute load average when the size was measured. */
  load: number;
  /** The floor: the same folders read and every file's lstat, nothing else (p50). */
  rawWalkP50Ms: number;
  firstMs: number;
  unchangedP50Ms: number;
  unchangedP99Ms: number;
  unchangedColdMs: number;
  oneChangedP50Ms: number;
  diffMs: number;
  rollbackMs: number;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

function makeWorkspace(dir: string, files: number): void {
  for (let i = 0; i < files; i++) {
    const folder = join(dir, `pkg${Math.floor(i / 20)}`, i % 3 === 0 ? "src" : "");
    mkdirSync(folder, { recursive: true });
    writeFileSync(
      join(folder, `file${i}.ts`),
      `// file ${i}\n${"export const x = 1;\n".repeat(50 + (i % 150))}`,
    );
  }
}

/** Reads every folder and stats every file, as the walk does, and nothing more. */
function rawWalk(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) rawWalk(path);
    else lstatSync(path, { bigint: true });
  }
}

async function benchSize(files: number, runs: number): Promise<CheckpointsBenchRow> {
  const root = mkdtempSync(join(tmpdir(), "herald-bench-ckpt-"));
  try {
    const workspaceDir = join(root, "ws");
    makeWorkspace(workspaceDir, files);
    const options = { workspaceDir, gitDir: join(root, "shadow"), limits: DEFAULT_CHECKPOINT_LIMITS };
    const store = new ShadowCheckpointStore(options);
    const walks: number[] = [];
    for (let i = 0; i < runs; i++) walks.push(await timed(async () => rawWalk(workspaceDir)));
    const firstMs = await timed(() => store.snapshot("first"));
    const unchanged: number[] = [];
    for (let i = 0; i < runs; i++) unchanged.push(await timed(() => store.snapshot("again")));
    const unchangedColdMs = await timed(() => new ShadowCheckpointStore(options).snapshot("fresh"));
    const changed: number[] = [];
    for (let i = 0; i < runs; i++) {
      writeFileSync(join(workspaceDir, "pkg0", "file1.ts"), `changed ${i}\n`);
      changed.push(await timed(() => store.snapshot(`change ${i}`)));
    }
    writeFileSync(join(workspaceDir, "pkg1", "file25.ts"), "one more change\n");
    const diffMs = await timed(() => store.diff(1, 12_000));
    const rollbackMs = await timed(() => store.restore(2));
    const p = (values: number[], q: number) => round(percentile(values, q));
    return {
      files,
      load: round(loadavg()[0] ?? 0, 1),
      rawWalkP50Ms: p(walks, 50),
      firstMs: round(firstMs),
      unchangedP50Ms: p(unchanged, 50),
      unchangedP99Ms: p(unchanged, 99),
      unchangedColdMs: round(unchangedColdMs),
      oneChangedP50Ms: p(changed, 50),
      diffMs: round(diffMs),
      rollbackMs: round(rollbackMs),
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** Runs every size. */
export async function benchCheckpoints(options: CheckpointsBenchOptions): Promise<CheckpointsBenchRow[]> {
  const rows: CheckpointsBenchRow[] = [];
  for (const files of options.sizes) rows.push(await benchSize(files, options.runs));
  return rows;
}

/** The BENCHMARKS.md section. */
export function checkpointsMarkdown(
  rows: CheckpointsBenchRow[],
  options: CheckpointsBenchOptions,
  command: string,
): string {
  const lines = rows.map(
    (r) =>
      `| ${r.files} | ${r.load} | ${r.rawWalkP50Ms} ms | ${r.firstMs} ms | **${r.unchangedP50Ms} / ${r.unchangedP99Ms} ms** | ${r.unchangedColdMs} ms | ${r.oneChangedP50Ms} ms | ${r.diffMs} ms | ${r.rollbackMs} ms |`,
  );
  return `## Checkpoints of a workspace

Command: \`${command}\` — ${machineLine()}. A workspace of small files (1–4 KB, 20 per folder) on the
local disk, its shadow repository beside it; the store in-process, as the agent loop calls it before a
turn's first change. "Nothing changed" is what such a turn pays when the workspace is as the latest
checkpoint left it (p50 / p99 of ${options.runs}); "fresh process" is the same check without the stat
cache (every file read and hashed again, nothing written). The floor is the walk alone (every folder read,
every file's \`lstat\`), measured in the same run: on a loaded machine compare against it. Target: nothing
changed ≤ 50 ms for 1,000 files.

| files | load average | floor: readdir + lstat p50 | first checkpoint | nothing changed p50 / p99 | nothing changed, fresh process | one file changed p50 | /diff (2 files) | /rollback |
|---|---|---|---|---|---|---|---|---|
${lines.join("\n")}

${rows.map((r) => `${r.files} files: nothing changed costs ${round(r.unchangedP50Ms / r.rawWalkP50Ms, 1)}× the bare walk`).join("; ")}. The load average is the machine's (2 cores shared with other jobs); on an idle machine every figure is smaller, the ratios about the same.
`;
}
