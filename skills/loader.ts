/**
 * Reads skills from disk: the bundled ones (the folders beside this file) and the user's
 * (`HERALD_HOME/skills/`, which win on a name clash). A SKILL.md whose frontmatter is broken is
 * reported with its file and field and skipped; it never stops the others from loading.
 * Synchronous on purpose: the prompt builder and slash commands run inside a SQLite transaction.
 */
import { accessSync, constants, existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import { z } from "zod";
import { compareCodePoints } from "../core/code-points.js";
import { moduleDir } from "../core/module-dir.js";
import { loadYaml } from "../core/yaml.js";
import type { Skill, SkillIssue, SkillMeta, SkillSource } from "./types.js";

export const SKILL_FILE = "SKILL.md";
/** Folders a skill may keep supporting files in. */
export const SUPPORT_DIRS = ["references", "templates", "scripts"] as const;
/** Lowercase letters, digits and dashes; starts with a letter or digit; usable as `/<name>`. */
export const SKILL_NAME = /^[a-z0-9][a-z0-9-]{0,63}$/;

const stringList = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (Array.isArray(v) ? v : [v]).map((s) => s.trim()).filter(Boolean));

/** The frontmatter schema; unknown keys (license, tags…) are allowed and ignored. */
export const frontmatterSchema = z.looseObject({
  name: z
    .string({ error: "is required (the skill's name, e.g. web-research)" })
    .regex(SKILL_NAME, "must be lowercase letters, digits and dashes (e.g. web-research)"),
  description: z
    .string({ error: "is required (one line: what the skill does and when to use it)" })
    .trim()
    .min(1, "must not be empty")
    .max(1024, "must be at most 1,024 characters"),
  version: z
    .union([z.string(), z.number()])
    .transform((v) => String(v))
    .optional(),
  platforms: stringList.optional(),
  requires: z.strictObject({ env: stringList.optional(), bins: stringList.optional() }).optional(),
});

/** Splits SKILL.md text into validated frontmatter and body, or the issues that stop it loading. */
export function parseSkillMarkdown(
  text: string,
  file: string,
): { meta: SkillMeta; body: string } | { issues: SkillIssue[] } {
  const normalized = text.replace(/^\uFEFF/, "").replace(/\r\n/g, "\n");
  const m = /^---\n([\s\S]*?)\n---[ \t]*(?:\n|$)([\s\S]*)$/.exec(normalized);
  if (!m) {
    return {
      issues: [
        {
          file,
          field: "frontmatter",
          message:
            "SKILL.md must start with a YAML frontmatter block between two '---' lines (name, description).",
        },
      ],
    };
  }
  let raw: unknown;
  try {
    raw = loadYaml().parse(m[1]!);
  } catch (err) {
    return {
      issues: [
        {
          file,
          field: "frontmatter",
          message: `is not valid YAML: ${(err as Error).message.split("\n")[0]}`,
        },
      ],
    };
  }
  const parsed = frontmatterSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    return {
      issues: parsed.error.issues.map((issue) => ({
        file,
        field: issue.path.join(".") || "frontmatter",
        message: issue.message,
      })),
    };
  }
  const { name, description, version, platforms, requires } = parsed.data;
  const meta: SkillMeta = { name, description };
  if (version !== undefined) meta.version = version;
  if (platforms?.length) meta.platforms = platforms;
  if (requires) meta.requires = requires;
  return { meta, body: m[2]!.trim() };
}

/**
 * SKILL.md files parsed before, by path, with the modification time and size they had: every new
 * session's prompt lists the skills, and parsing YAML frontmatter each time cost about a millisecond.
 */
const parsedFiles = new Map<string, { mtimeMs: number; size: number; parsed: ParsedSkill }>();

type ParsedSkill = ReturnType<typeof parseSkillMarkdown>;

function parseCached(file: string, stat: { mtimeMs: number; size: number }): ParsedSkill {
  const hit = parsedFiles.get(file);
  if (hit && hit.mtimeMs === stat.mtimeMs && hit.size === stat.size) return hit.parsed;
  const parsed = parseSkillMarkdown(readFileSync(file, "utf8"), file);
  parsedFiles.set(file, { mtimeMs: stat.mtimeMs, size: stat.size, parsed });
  return parsed;
}

export interface LoadOptions {
  /** The environment `requires.env` is checked against. @defaultValue process.env */
  env?: Record<string, string | undefined> | undefined;
}

/** Loads one skill folder; its folder name must equal its `name`. */
export function loadSkillDir(
  dir: string,
  source: SkillSource,
  options: LoadOptions = {},
): { skill: Skill } | { issues: SkillIssue[] } {
  const file = join(dir, SKILL_FILE);
  const stat = statSync(file, { throwIfNoEntry: false });
  if (!stat) return { issues: [{ file, field: "file", message: "is missing" }] };
  const parsed = parseCached(file, stat);
  if ("issues" in parsed) return parsed;
  const folder = dir.split(/[\\/]/).pop();
  if (parsed.meta.name !== folder) {
    return {
      issues: [
        {
          file,
          field: "name",
          message: `is '${parsed.meta.name}' but the folder is '${folder}'; they must match`,
        },
      ],
    };
  }
  const skill: Skill = { meta: parsed.meta, source, dir, body: parsed.body, files: listSupportFiles(dir) };
  const unavailable = checkRequirements(parsed.meta, options.env ?? process.env);
  if (unavailable) skill.unavailable = unavailable;
  return { skill };
}

/** Every skill folder of `dir` (dot-folders such as `.versions` are not skills). */
export function loadSkillsFrom(
  dir: string,
  source: SkillSource,
  options: LoadOptions = {},
): { skills: Skill[]; issues: SkillIssue[] } {
  const skills: Skill[] = [];
  const issues: SkillIssue[] = [];
  if (!existsSync(dir)) return { skills, issues };
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith(".") || entry.name === "node_modules") continue;
    const loaded = loadSkillDir(join(dir, entry.name), source, options);
    if ("skill" in loaded) skills.push(loaded.skill);
    else issues.push(...loaded.issues);
  }
  return { skills, issues };
}

/** Bundled and user skills by name, the user's winning a clash, sorted by name. */
export function loadSkills(
  bundledDir: string,
  userDir: string,
  options: LoadOptions = {},
): { skills: Skill[]; issues: SkillIssue[] } {
  const bundled = loadSkillsFrom(bundledDir, "bundled", options);
  const user = loadSkillsFrom(userDir, "user", options);
  const byName = new Map<string, Skill>();
  for (const skill of [...bundled.skills, ...user.skills]) byName.set(skill.meta.name, skill);
  return {
    skills: [...byName.values()].sort((a, b) => compareCodePoints(a.meta.name, b.meta.name)),
    issues: [...bundled.issues, ...user.issues],
  };
}

/** The folder of the bundled skills, from source (`skills/bundled/`) or from the build (`dist/skills/` → `skills/bundled/`). */
export function bundledSkillsDir(): string {
  const here = moduleDir(import.meta.url, "skills");
  const candidates = [join(here, "bundled"), join(here, "..", "..", "skills", "bundled")];
  const hasSkills = (dir: string) =>
    existsSync(dir) &&
    readdirSync(dir, { withFileTypes: true }).some(
      (e) => e.isDirectory() && existsSync(join(dir, e.name, SKILL_FILE)),
    );
  return candidates.find(hasSkills) ?? candidates[0]!;
}

/** Supporting files under the support folders, relative with `/`, sorted (at most 200). */
export function listSupportFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string, depth: number) => {
    const abs = join(dir, rel);
    if (!existsSync(abs) || depth > 4 || out.length >= 200) return;
    for (const entry of readdirSync(abs, { withFileTypes: true })) {
      if (entry.name.startsWith(".")) continue;
      const child = `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(child, depth + 1);
      else if (entry.isFile()) out.push(child);
    }
  };
  for (const sub of SUPPORT_DIRS) walk(sub, 1);
  return out.sort();
}

const OS_NAMES: Record<string, NodeJS.Platform> = {
  linux: "linux",
  macos: "darwin",
  darwin: "darwin",
  mac: "darwin",
  windows: "win32",
  win32: "win32",
};

/** Why the skill cannot run on this machine, or undefined. Chat platforms are checked per turn. */
function checkRequirements(meta: SkillMeta, env: Record<string, string | undefined>): string | undefined {
  const oses = (meta.platforms ?? []).map((p) => OS_NAMES[p.toLowerCase()]).filter(Boolean);
  if (oses.length && !oses.includes(process.platform)) return `only for ${meta.platforms!.join(", ")}`;
  const missingEnv = (meta.requires?.env ?? []).filter((name) => !env[name]);
  if (missingEnv.length)
    return `needs the environment variable${missingEnv.length > 1 ? "s" : ""} ${missingEnv.join(", ")}`;
  const missingBins = (meta.requires?.bins ?? []).filter((bin) => !onPath(bin, env["PATH"] ?? ""));
  if (missingBins.length) return `needs ${missingBins.join(", ")} on PATH`;
  return undefined;
}

/** Whether the skill may be offered on a chat platform (its `platforms` names none, or this one). */
export function fitsPlatform(meta: SkillMeta, platform: string): boolean {
  const chats = (meta.platforms ?? []).filter((p) => !OS_NAMES[p.toLowerCase()]);
  return chats.length === 0 || chats.includes(platform);
}

const binCache = new Map<string, { found: boolean; at: number }>();

function onPath(bin: string, path: string): boolean {
  const key = `${bin}\u0000${path}`;
  const cached = binCache.get(key);
  if (cached && Date.now() - cached.at < 60_000) return cached.found;
  const found = path
    .split(delimiter)
    .filter(Boolean)
    .some((dir) => {
      try {
        const file = join(dir, bin);
        accessSync(file, constants.X_OK);
        return statSync(file).isFile();
      } catch {
        return false;
      }
    });
  binCache.set(key, { found, at: Date.now() });
  return found;
}
