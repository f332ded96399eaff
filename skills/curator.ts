/**
 * The skills curator (`herald skills curate`, optionally weekly in the gateway): grades skills by use,
 * merges near-duplicate user skills into the more used one, archives user skills unused for a long
 * time, and writes a Markdown report under `HERALD_HOME/logs/curator/`. Bundled skills are graded but
 * never changed. Every change goes through the store, so each one can be rolled back.
 */
import { statSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseSkillMarkdown, SKILL_FILE } from "./loader.js";
import type { FileSkillStore, SkillUsage } from "./store.js";
import type { Skill } from "./types.js";
import { MAX_SKILL_CHARS } from "./validate.js";

const DAY_MS = 86_400_000;

export interface CurateOptions {
  store: FileSkillStore;
  /** `HERALD_HOME/logs/curator`. */
  reportDir: string;
  /** Epoch ms. @defaultValue Date.now() */
  now?: number | undefined;
  /** User skills unused (and older than) this many days are archived. @defaultValue 90 */
  archiveAfterDays?: number | undefined;
  /** Name-and-description word overlap (Jaccard) from which two skills count as duplicates. @defaultValue 0.6 */
  similarity?: number | undefined;
  /** Report only, change nothing. @defaultValue false */
  dryRun?: boolean | undefined;
}

export type Grade = "A" | "B" | "C" | "D";

export interface GradedSkill {
  name: string;
  source: Skill["source"];
  uses: number;
  lastUsedAt?: number | undefined;
  grade: Grade;
}

export interface CurateReport {
  graded: GradedSkill[];
  merged: { kept: string; merged: string; similarity: number }[];
  archived: string[];
  notes: string[];
  reportPath: string;
}

/** Runs the curator once. */
export async function curateSkills(options: CurateOptions): Promise<CurateReport> {
  const { store, dryRun = false } = options;
  const now = options.now ?? Date.now();
  const archiveAfterMs = (options.archiveAfterDays ?? 90) * DAY_MS;
  const usage = store.usage();
  const { skills, issues } = store.catalog();
  const graded = skills.map((s) => grade(s, usage[s.meta.name], now));
  const report: CurateReport = { graded, merged: [], archived: [], notes: [], reportPath: "" };
  for (const issue of issues) report.notes.push(`broken: ${issue.file}: ${issue.field} ${issue.message}`);

  // Near-duplicates: user pairs are merged into the more used one; overlaps with a bundled skill are noted.
  const gone = new Set<string>();
  const threshold = options.similarity ?? 0.6;
  for (const [i, a] of skills.entries()) {
    for (const b of skills.slice(i + 1)) {
      if (gone.has(a.meta.name) || gone.has(b.meta.name)) continue;
      const similarity = jaccard(words(a), words(b));
      if (similarity < threshold) continue;
      const rounded = Math.round(similarity * 100) / 100;
      if (a.source === "bundled" || b.source === "bundled") {
        report.notes.push(
          `${a.meta.name} (${a.source}) overlaps ${b.meta.name} (${b.source}), similarity ${rounded}`,
        );
        continue;
      }
      const [keep, drop] = rank(a, usage) >= rank(b, usage) ? [a, b] : [b, a];
      if (!dryRun) {
        const merged = await merge(store, keep, drop, now);
        if (merged) {
          report.notes.push(`merge of ${drop.meta.name} into ${keep.meta.name} skipped: ${merged}`);
          continue;
        }
      }
      gone.add(drop.meta.name);
      report.merged.push({ kept: keep.meta.name, merged: drop.meta.name, similarity: rounded });
    }
  }

  for (const skill of skills) {
    if (skill.source !== "user" || gone.has(skill.meta.name)) continue;
    const used = usage[skill.meta.name];
    const createdAt = used?.createdAt ?? statSync(join(skill.dir, SKILL_FILE)).mtimeMs;
    const lastActive = used?.lastUsedAt ?? createdAt;
    if (now - lastActive < archiveAfterMs) continue;
    if (!dryRun) {
      const archived = await store.archive(skill.meta.name);
      if (!archived.ok) {
        report.notes.push(`archive of ${skill.meta.name} failed: ${archived.error}`);
        continue;
      }
    }
    report.archived.push(skill.meta.name);
  }

  report.reportPath = join(options.reportDir, `${new Date(now).toISOString().replace(/[:.]/g, "-")}.md`);
  await mkdir(options.reportDir, { recursive: true });
  await writeFile(report.reportPath, renderReport(report, now, dryRun, options.archiveAfterDays ?? 90));
  return report;
}

/** A: used 3+ times in the last 30 days; B: used in the last 30 days; C: used before; D: never used. */
function grade(skill: Skill, used: SkillUsage | undefined, now: number): GradedSkill {
  const uses = used?.uses ?? 0;
  const recent = used?.lastUsedAt !== undefined && now - used.lastUsedAt < 30 * DAY_MS;
  const letter: Grade = uses === 0 ? "D" : recent ? (uses >= 3 ? "A" : "B") : "C";
  return { name: skill.meta.name, source: skill.source, uses, lastUsedAt: used?.lastUsedAt, grade: letter };
}

function rank(skill: Skill, usage: Record<string, SkillUsage>): number {
  const used = usage[skill.meta.name];
  // Uses first, then recency, then the longer instructions.
  return (used?.uses ?? 0) * 1e15 + (used?.lastUsedAt ?? 0) / 1e3 + skill.body.length / 1e9;
}

/** Appends `drop`'s instructions to `keep` and archives `drop`. Returns why it could not, or undefined. */
async function merge(
  store: FileSkillStore,
  keep: Skill,
  drop: Skill,
  now: number,
): Promise<string | undefined> {
  const date = new Date(now).toISOString().slice(0, 10);
  const text = await readFile(join(keep.dir, SKILL_FILE), "utf8");
  if ("issues" in parseSkillMarkdown(text, keep.dir)) return "its SKILL.md no longer loads";
  const filesNote = drop.files.length
    ? `\n\n(Its supporting files stay in the archive: ${drop.files.join(", ")}.)`
    : "";
  const section = `\n\n## Merged from ${drop.meta.name} (curator, ${date})\n\n${drop.body}${filesNote}\n`;
  let patched = `${text.trimEnd()}${section}`;
  if (patched.length > MAX_SKILL_CHARS) {
    const file = `references/merged-${drop.meta.name}.md`;
    const added = await store.manage({
      action: "create",
      name: keep.meta.name,
      file,
      content: `${drop.body}\n`,
    });
    if (!added.ok) return added.error;
    patched = `${text.trimEnd()}\n\n## Merged from ${drop.meta.name} (curator, ${date})\n\nSee ${file}.\n`;
  }
  const result = await store.manage({ action: "patch", name: keep.meta.name, content: patched });
  if (!result.ok) return result.error;
  const archived = await store.archive(drop.meta.name);
  return archived.ok ? undefined : archived.error;
}

const STOPWORDS = new Set(
  "the and for with from into that this when what your you use used using how a an of to in on or is are be it its by as at".split(
    " ",
  ),
);

function words(skill: Skill): Set<string> {
  const text = `${skill.meta.name.replace(/-/g, " ")} ${skill.meta.description}`.toLowerCase();
  return new Set(text.split(/[^a-z0-9]+/).filter((w) => w.length > 2 && !STOPWORDS.has(w)));
}

function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let shared = 0;
  for (const w of a) if (b.has(w)) shared++;
  return shared / (a.size + b.size - shared);
}

function renderReport(report: CurateReport, now: number, dryRun: boolean, archiveAfterDays: number): string {
  const day = (ms: number | undefined) => (ms ? new Date(ms).toISOString().slice(0, 10) : "never");
  const rows = report.graded.map(
    (g) => `| ${g.name} | ${g.source} | ${g.uses} | ${day(g.lastUsedAt)} | ${g.grade} |`,
  );
  const list = (items: string[]) => (items.length ? items.map((i) => `- ${i}`).join("\n") : "- none");
  return [
    `# Skills curator report, ${new Date(now).toISOString().slice(0, 16).replace("T", " ")} UTC${dryRun ? " (dry run: nothing changed)" : ""}`,
    "",
    "Grades: A used 3+ times in the last 30 days, B used in the last 30 days, C used before, D never used.",
    "",
    "| skill | source | uses | last used | grade |",
    "|---|---|---|---|---|",
    ...rows,
    "",
    "## Merged near-duplicates",
    list(report.merged.map((m) => `kept ${m.kept}, merged ${m.merged} into it (similarity ${m.similarity})`)),
    "",
    `## Archived (user skills unused for ${archiveAfterDays}+ days)`,
    list(report.archived),
    "",
    "## Notes",
    list(report.notes),
    "",
    "Every change keeps the previous version: `skill_manage rollback` restores it; archived skills are in HERALD_HOME/skills/.archive/.",
    "",
  ].join("\n");
}
