/**
 * `FileSkillStore`: bundled skills (read-only) plus the user's skills in `HERALD_HOME/skills/`, with
 * every change versioned for rollback. Beside the skills it keeps:
 * - `.versions/<name>/<stamp>/`: the folder as it was before each change (an `.absent` marker when
 *   there was no user copy: rolling back a create removes the skill, rolling back the first patch of
 *   a bundled skill brings the bundled one back);
 * - `.archive/<name>-<stamp>/`: skills the curator retired;
 * - `.usage.json`: uses per skill (the curator grades by it).
 * Writers take one lock for the folder; files are written atomically.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { cp, mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../core/logger.js";
import { listSupportFiles, loadSkills, parseSkillMarkdown, SKILL_FILE } from "./loader.js";
import { withFileLock, writeFileAtomic } from "./memory/atomic.js";
import type {
  Skill,
  SkillFiles,
  SkillIssue,
  SkillManageRequest,
  SkillResult,
  SkillSummary,
} from "./types.js";
import { checkFileText, checkName, checkSkillText, MAX_FILE_CHARS, resolveSupportPath } from "./validate.js";

export interface FileSkillStoreOptions {
  /** Folder of the bundled skills (`bundledSkillsDir()`). */
  bundledDir: string;
  /** `HERALD_HOME/skills`. */
  userDir: string;
  /** Checked against `requires.env`. @defaultValue process.env */
  env?: Record<string, string | undefined> | undefined;
  /** Told about broken SKILL.md files (once per distinct problem). */
  logger?: Logger | undefined;
  /** Versions kept per skill. @defaultValue 10 */
  maxVersions?: number | undefined;
  now?: (() => number) | undefined;
}

/** Uses of one skill. Epoch ms. */
export interface SkillUsage {
  uses: number;
  lastUsedAt?: number | undefined;
  createdAt?: number | undefined;
}

const ABSENT = ".absent";

export class FileSkillStore implements SkillFiles {
  readonly bundledDir: string;
  readonly userDir: string;
  readonly #options: FileSkillStoreOptions;
  readonly #reported = new Set<string>();
  readonly #now: () => number;
  #stampCounter = 0;

  constructor(options: FileSkillStoreOptions) {
    this.bundledDir = options.bundledDir;
    this.userDir = options.userDir;
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** Every skill that loads and every SKILL.md that did not (each new problem is logged once). */
  catalog(): { skills: Skill[]; issues: SkillIssue[] } {
    const loaded = loadSkills(this.bundledDir, this.userDir, { env: this.#options.env });
    for (const issue of loaded.issues) {
      const key = `${issue.file}|${issue.field}|${issue.message}`;
      if (this.#reported.has(key)) continue;
      this.#reported.add(key);
      this.#options.logger?.warn(issue, "skill skipped: SKILL.md is invalid");
    }
    return loaded;
  }

  /** The skill called `name`, if it loads. */
  find(name: string): Skill | undefined {
    return this.catalog().skills.find((s) => s.meta.name === name);
  }

  async list(): Promise<{ skills: SkillSummary[]; issues: SkillIssue[] }> {
    const { skills, issues } = this.catalog();
    return { skills: skills.map(summarize), issues };
  }

  async view(
    name: string,
    options: { file?: string | undefined; countUse?: boolean | undefined } = {},
  ): Promise<SkillResult> {
    const skill = this.#locate(name);
    if (!skill) return { ok: false, error: this.#notFound(name) };
    if (options.countUse) await this.recordUse(name);
    if (!options.file) {
      const text = readFileSync(join(skill.dir, SKILL_FILE), "utf8");
      const files = skill.files.length
        ? `\n\n---\nSupporting files (load one with skill_view and file): ${skill.files.join(", ")}`
        : "";
      const note = skill.unavailable ? `\n\nNote: this skill cannot run here: ${skill.unavailable}.` : "";
      return { ok: true, message: `${text.trim()}${files}${note}` };
    }
    const resolved = resolveSupportPath(skill.dir, options.file);
    if ("error" in resolved) return { ok: false, error: resolved.error };
    if (!existsSync(resolved.path) || !statSync(resolved.path).isFile()) {
      return {
        ok: false,
        error: `${name} has no file ${options.file}. Its files: ${skill.files.join(", ") || "none"}.`,
      };
    }
    return { ok: true, message: readFileSync(resolved.path, "utf8") };
  }

  manage(request: SkillManageRequest): Promise<SkillResult> {
    const invalid = checkName(request.name);
    if (invalid) return Promise.resolve({ ok: false, error: invalid });
    return this.#locked(async () => {
      switch (request.action) {
        case "create":
          return request.file
            ? this.#addFile(request.name, request.file, request.content)
            : this.#create(request.name, request.content);
        case "patch":
          return this.#patch(request);
        case "delete":
          return this.#delete(request.name);
        case "rollback":
          return this.#rollback(request.name);
      }
    });
  }

  /** Counts a use of `name` (a `/<name>` invocation, a `skill_view` in a turn). */
  recordUse(name: string): Promise<void> {
    return this.#locked(async () => {
      const usage = this.usage();
      const entry = usage[name] ?? { uses: 0 };
      usage[name] = { ...entry, uses: entry.uses + 1, lastUsedAt: this.#now() };
      await writeFileAtomic(this.#usagePath(), `${JSON.stringify(usage, null, 2)}\n`);
    });
  }

  /** Uses by skill name. */
  usage(): Record<string, SkillUsage> {
    try {
      return JSON.parse(readFileSync(this.#usagePath(), "utf8")) as Record<string, SkillUsage>;
    } catch {
      return {};
    }
  }

  /** Moves a user skill to `.archive/` (the curator); its last version is kept for rollback too. */
  archive(name: string): Promise<SkillResult> {
    return this.#locked(async () => {
      const dir = join(this.userDir, name);
      if (!existsSync(dir))
        return { ok: false, error: `${name} is not a user skill; only those can be archived.` };
      await this.#saveVersion(name);
      const target = join(this.userDir, ".archive", `${name}-${this.#stamp()}`);
      await mkdir(join(this.userDir, ".archive"), { recursive: true });
      await rename(dir, target);
      return { ok: true, message: `Archived ${name} to ${target}.` };
    });
  }

  /**
   * Copies the skill folder `sourceDir` (with SKILL.md) into the user's skills. An existing user skill
   * of that name is replaced only with `force` (its version is kept).
   */
  install(sourceDir: string, options: { force?: boolean } = {}): Promise<SkillResult> {
    return this.#locked(async () => {
      const file = join(sourceDir, SKILL_FILE);
      if (!existsSync(file))
        return { ok: false, error: `${sourceDir} has no ${SKILL_FILE}; give the skill's folder.` };
      const text = await readFile(file, "utf8");
      const parsed = parseSkillMarkdown(text, file);
      if ("issues" in parsed) {
        return {
          ok: false,
          error: parsed.issues.map((i) => `${i.file}: ${i.field}: ${i.message}`).join("\n"),
        };
      }
      const { name } = parsed.meta;
      // What a user installs on purpose is theirs to judge; only the shape and size are checked.
      const refusal = checkSkillText(name, text, { checkContent: false });
      if (refusal) return { ok: false, error: refusal };
      const files = listSupportFiles(sourceDir);
      for (const rel of files) {
        const resolved = resolveSupportPath(sourceDir, rel);
        if ("error" in resolved) return { ok: false, error: resolved.error };
        if (statSync(resolved.path).size > MAX_FILE_CHARS)
          return {
            ok: false,
            error: `${rel} is larger than the cap of ${MAX_FILE_CHARS.toLocaleString("en-US")} bytes.`,
          };
      }
      const target = join(this.userDir, name);
      if (existsSync(target) && !options.force)
        return {
          ok: false,
          error: `A user skill named ${name} exists already; use --force to replace it (the old one is kept as a version).`,
        };
      const staged = await this.#stage(name, async (tmp) => {
        await writeFile(join(tmp, SKILL_FILE), text);
        for (const rel of files) await cp(join(sourceDir, rel), join(tmp, rel), { recursive: true });
      });
      await this.#saveVersion(name);
      await rm(target, { recursive: true, force: true });
      await rename(staged, target);
      await this.#touchCreated(name);
      return { ok: true, message: `Installed ${name} to ${target}.` };
    });
  }

  async #create(name: string, content: string): Promise<SkillResult> {
    const existing = this.find(name);
    if (existing?.source === "user" || existsSync(join(this.userDir, name)))
      return {
        ok: false,
        error: `refused: a skill named ${name} exists already. Use action "patch" to change it.`,
      };
    if (existing)
      return {
        ok: false,
        error: `refused: ${name} is a bundled skill. Use action "patch" to make your own version of it.`,
      };
    const refusal = checkSkillText(name, content);
    if (refusal) return { ok: false, error: refusal };
    const staged = await this.#stage(name, (tmp) => writeFile(join(tmp, SKILL_FILE), ensureNewline(content)));
    await this.#saveVersion(name);
    await rename(staged, join(this.userDir, name));
    await this.#touchCreated(name);
    return {
      ok: true,
      message: `Created skill ${name}. It is listed by skills_list now and in the system prompt from the next session on.`,
    };
  }

  async #patch(request: Extract<SkillManageRequest, { action: "patch" }>): Promise<SkillResult> {
    const { name, file } = request;
    const skill = this.#locate(name);
    if (!skill) return { ok: false, error: this.#notFound(name) };
    const resolved = file ? resolveSupportPath(skill.dir, file) : { path: join(skill.dir, SKILL_FILE) };
    if ("error" in resolved) return { ok: false, error: resolved.error };
    if (!existsSync(resolved.path))
      return { ok: false, error: `${name} has no file ${file}. Use action "create" with file to add it.` };
    const current = await readFile(resolved.path, "utf8");
    let next: string;
    if (request.content !== undefined) next = ensureNewline(request.content);
    else if (request.oldText) {
      const count = current.split(request.oldText).length - 1;
      if (count !== 1)
        return {
          ok: false,
          error:
            count === 0
              ? `old_text was not found in ${file ?? SKILL_FILE} of ${name}. Copy it exactly (view the skill first), or send the whole new content.`
              : `old_text appears ${count} times in ${file ?? SKILL_FILE}; quote a longer, unique piece.`,
        };
      next = current.replace(request.oldText, () => request.newText ?? "");
    } else return { ok: false, error: "patch needs content (the whole new text) or old_text and new_text." };
    const refusal = file ? checkFileText(next) : checkSkillText(name, next);
    if (refusal) return { ok: false, error: refusal };
    const rel = file ?? SKILL_FILE;
    await this.#saveVersion(name);
    if (skill.source === "bundled") await cp(skill.dir, join(this.userDir, name), { recursive: true });
    await writeFileAtomic(join(this.userDir, name, rel), next);
    const override = skill.source === "bundled" ? " (your own copy now overrides the bundled skill)" : "";
    return {
      ok: true,
      message: `Patched ${rel} of ${name}${override}. "rollback" restores the previous version.`,
    };
  }

  async #addFile(name: string, file: string, content: string): Promise<SkillResult> {
    const skill = this.#locate(name);
    if (!skill) return { ok: false, error: `${this.#notFound(name)} Create the skill (without file) first.` };
    const resolved = resolveSupportPath(skill.dir, file);
    if ("error" in resolved) return { ok: false, error: resolved.error };
    if (existsSync(resolved.path))
      return { ok: false, error: `${name} already has ${file}; use action "patch" to change it.` };
    const refusal = checkFileText(content);
    if (refusal) return { ok: false, error: refusal };
    await this.#saveVersion(name);
    if (skill.source === "bundled") await cp(skill.dir, join(this.userDir, name), { recursive: true });
    const target = resolveSupportPath(join(this.userDir, name), file);
    if ("error" in target) return { ok: false, error: target.error };
    await writeFileAtomic(target.path, content);
    return { ok: true, message: `Added ${file} to ${name}.` };
  }

  async #delete(name: string): Promise<SkillResult> {
    const dir = join(this.userDir, name);
    if (!existsSync(dir)) {
      return {
        ok: false,
        error: this.find(name)
          ? `refused: ${name} is a bundled skill and cannot be deleted.`
          : this.#notFound(name),
      };
    }
    await this.#saveVersion(name);
    await rm(dir, { recursive: true, force: true });
    return { ok: true, message: `Deleted ${name}. "rollback" restores it.` };
  }

  async #rollback(name: string): Promise<SkillResult> {
    const versionsDir = join(this.userDir, ".versions", name);
    const versions = existsSync(versionsDir) ? (await readdir(versionsDir)).sort() : [];
    const latest = versions.at(-1);
    if (!latest)
      return { ok: false, error: `No earlier version of ${name} is kept; there is nothing to roll back.` };
    const from = join(versionsDir, latest);
    const dir = join(this.userDir, name);
    await rm(dir, { recursive: true, force: true });
    if (existsSync(join(from, ABSENT))) await rm(from, { recursive: true, force: true });
    else await rename(from, dir);
    const restored = this.find(name);
    const what = restored
      ? `${restored.source === "bundled" ? "the bundled version" : "the previous version"}`
      : "no skill (it did not exist before)";
    return { ok: true, message: `Rolled ${name} back to ${what}.` };
  }

  /** Keeps the user folder of `name` as it is now (or an `.absent` marker) and trims old versions. */
  async #saveVersion(name: string): Promise<void> {
    const versionsDir = join(this.userDir, ".versions", name);
    const target = join(versionsDir, this.#stamp());
    const dir = join(this.userDir, name);
    await mkdir(versionsDir, { recursive: true });
    if (existsSync(dir)) await cp(dir, target, { recursive: true });
    else {
      await mkdir(target);
      await writeFile(join(target, ABSENT), "");
    }
    const all = (await readdir(versionsDir)).sort();
    const excess = all.length - (this.#options.maxVersions ?? 10);
    for (const old of all.slice(0, Math.max(0, excess)))
      await rm(join(versionsDir, old), { recursive: true, force: true });
  }

  /** Builds a folder under a temp name (renamed into place by the caller). */
  async #stage(name: string, fill: (dir: string) => Promise<void>): Promise<string> {
    const tmp = join(this.userDir, `.tmp-${name}-${this.#stamp()}`);
    await mkdir(tmp, { recursive: true });
    try {
      await fill(tmp);
    } catch (err) {
      await rm(tmp, { recursive: true, force: true });
      throw err;
    }
    return tmp;
  }

  async #touchCreated(name: string): Promise<void> {
    const usage = this.usage();
    usage[name] = { uses: usage[name]?.uses ?? 0, ...usage[name], createdAt: this.#now() };
    await writeFileAtomic(this.#usagePath(), `${JSON.stringify(usage, null, 2)}\n`);
  }

  /**
   * The skill called `name`; a user folder whose SKILL.md does not load counts too (with `files` only),
   * so a broken skill can be viewed and repaired with a patch.
   */
  #locate(name: string): Pick<Skill, "dir" | "source" | "files" | "unavailable"> | undefined {
    const found = this.find(name);
    if (found) return found;
    const dir = join(this.userDir, name);
    if (!existsSync(join(dir, SKILL_FILE))) return undefined;
    return { dir, source: "user", files: listSupportFiles(dir), unavailable: "its SKILL.md is invalid" };
  }

  #locked<T>(fn: () => Promise<T>): Promise<T> {
    return withFileLock(join(this.userDir, ".skills"), async () => {
      await mkdir(this.userDir, { recursive: true });
      return fn();
    });
  }

  #usagePath(): string {
    return join(this.userDir, ".usage.json");
  }

  /** Sortable and unique within the process: `<epoch ms, 14 digits>-<counter>`. */
  #stamp(): string {
    return `${String(this.#now()).padStart(14, "0")}-${String(++this.#stampCounter).padStart(4, "0")}`;
  }

  #notFound(name: string): string {
    const names = this.catalog().skills.map((s) => s.meta.name);
    return `There is no skill named ${name}. Skills: ${names.join(", ") || "none"}.`;
  }
}

function summarize(skill: Skill): SkillSummary {
  const summary: SkillSummary = {
    name: skill.meta.name,
    description: skill.meta.description,
    source: skill.source,
    files: skill.files,
  };
  if (skill.meta.version) summary.version = skill.meta.version;
  if (skill.unavailable) summary.unavailable = skill.unavailable;
  return summary;
}

function ensureNewline(text: string): string {
  return text.endsWith("\n") ? text : `${text}\n`;
}
