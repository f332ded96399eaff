/**
 * Contracts of skills: a skill is a folder with `SKILL.md` (YAML frontmatter + Markdown instructions)
 * and optional `references/`, `templates/`, `scripts/`. Bundled skills ship in this folder; user skills
 * live in `HERALD_HOME/skills/` and win on a name clash. Tools reach skills through `SkillsStateApi`
 * (in-process or over HTTP).
 */
import type { Caller } from "../core/access.js";

/** The frontmatter of a SKILL.md, validated. */
export interface SkillMeta {
  name: string;
  description: string;
  version?: string | undefined;
  /** Where it works: OS names (`linux`, `macos`, `windows`) and/or chat platforms (`telegram`…). */
  platforms?: string[] | undefined;
  /** What it needs: env variables that must be set, binaries that must be on PATH. */
  requires?: { env?: string[] | undefined; bins?: string[] | undefined } | undefined;
}

export type SkillSource = "bundled" | "user";

/** A loaded skill. */
export interface Skill {
  meta: SkillMeta;
  source: SkillSource;
  /** The skill's folder. */
  dir: string;
  /** The Markdown instructions after the frontmatter. */
  body: string;
  /** Supporting files, relative to `dir` (`references/api.md`), sorted. */
  files: string[];
  /** Set when the skill cannot run here (a missing env variable or binary, another OS). */
  unavailable?: string | undefined;
}

/** A SKILL.md that could not be loaded: which file, which field, what is wrong. */
export interface SkillIssue {
  file: string;
  /** The frontmatter field at fault, or `frontmatter` / `file` for the whole. */
  field: string;
  message: string;
}

/** What `skills_list` shows of one skill. */
export interface SkillSummary {
  name: string;
  description: string;
  version?: string | undefined;
  source: SkillSource;
  files: string[];
  unavailable?: string | undefined;
}

/** A change `skill_manage` asks for. `file` addresses a supporting file instead of SKILL.md. */
export type SkillManageRequest =
  | { action: "create"; name: string; content: string; file?: string | undefined }
  | {
      action: "patch";
      name: string;
      /** The whole new text of the file. */
      content?: string | undefined;
      /** Or: replace this exact text (unique in the file) with `newText`. */
      oldText?: string | undefined;
      newText?: string | undefined;
      file?: string | undefined;
    }
  | { action: "delete"; name: string }
  | { action: "rollback"; name: string };

/** A result phrased for the model; refusals are results, not errors. */
export type SkillResult = { ok: true; message: string } | { ok: false; error: string };

/** The skill files (`FileSkillStore`); the dashboard edits them as the owner. */
export interface SkillFiles {
  /** Skills that load (available or not) and the SKILL.md files that did not. */
  list(): Promise<{ skills: SkillSummary[]; issues: SkillIssue[] }>;
  /**
   * A skill's SKILL.md (frontmatter included) and its file list, or one supporting file.
   * `countUse` records a use (the curator grades skills by use).
   */
  view(
    name: string,
    options?: { file?: string | undefined; countUse?: boolean | undefined },
  ): Promise<SkillResult>;
  /** Creates, patches, deletes or rolls back a user skill; every change keeps the previous version. */
  manage(request: SkillManageRequest): Promise<SkillResult>;
}

/**
 * What tools need of skills: the skill files of the caller's agent (`agents[].skills_dir`, else the
 * shared folder), changed only by a caller that acts for an owner (skills are shared by every chat of
 * the agent: their index enters every prompt). Anyone else's `manage` is refused with a result saying
 * so.
 */
export interface SkillsStateApi {
  /** The caller's agent's skills: those that load (available or not) and the SKILL.md files that did not. */
  list(caller: Caller): ReturnType<SkillFiles["list"]>;
  /** A skill of the caller's agent, as {@link SkillFiles.view}. */
  view(name: string, options: Parameters<SkillFiles["view"]>[1], caller: Caller): Promise<SkillResult>;
  /** Creates, patches, deletes or rolls back a user skill of the caller's agent, for an owner's caller. */
  manage(request: SkillManageRequest, caller: Caller): Promise<SkillResult>;
  /** Searches the skill indexes of `skills.sources` (installs nothing). */
  search(query: string): Promise<RemoteSkillSearch>;
}

/** What the skill indexes of `skills.sources` list for a query (`skills_list` with `remote`). */
export interface RemoteSkillSearch {
  /** How many indexes are configured (none: nothing was searched). */
  indexes: number;
  /** The matching entries; `source` is what `/skills install` and `herald skills install` take. */
  found: { name: string; description: string; source: string; version?: string | undefined; index: string }[];
  /** The indexes that could not be read, with why. */
  failed: { index: string; error: string }[];
}
