/**
 * Skills from anywhere: a git repository, an archive URL or GitHub's `owner/repo/path`, fetched into a
 * temporary folder, checked (a valid SKILL.md; no links; no file over the cap; no executable unless
 * allowed), shown, then installed through the `FileSkillStore` with the commit (git) or SHA-256
 * (archive) recorded in `HERALD_HOME/skills/.sources.json`; `update` fetches the source again and
 * shows the diff before it replaces anything; `remove` deletes the skill (a version is kept) and its
 * record. Archives come through a download function the caller gives (the guarded fetch).
 */
import { existsSync, lstatSync, readdirSync, readFileSync } from "node:fs";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { listSupportFiles, parseSkillMarkdown, SKILL_FILE } from "./loader.js";
import {
  cloneSkillRepo,
  diffFolders,
  SkillFetchError,
  sha256,
  unpackTarGz,
  unpackZip,
} from "./remote-fetch.js";
import { describeSource, type RemoteSource } from "./remote-source.js";
import type { FileSkillStore } from "./store.js";
import { checkSkillText, MAX_FILE_CHARS } from "./validate.js";

/** Where an installed skill came from and what was installed. */
export interface SkillSourceRecord {
  /** The source as given (`owner/repo/path`, a URL). */
  spec: string;
  kind: "git" | "archive";
  /** The commit (git) or the archive's SHA-256. */
  pin: string;
  installedAt: string;
}

/** A remote skill fetched and checked, not installed yet. */
export interface FetchedSkill {
  name: string;
  description: string;
  version?: string | undefined;
  /** What would be installed: SKILL.md and the supporting files, with their sizes. */
  files: { path: string; bytes: number }[];
  kind: "git" | "archive";
  pin: string;
  /** A folder holding exactly what would be installed. */
  dir: string;
  /** Removes the temporary folders. */
  cleanup(): Promise<void>;
}

/** What fetching needs from the caller. */
export interface RemoteSkillOptions {
  /** Downloads an archive (the guarded fetch), at most `maxBytes`; rejects saying why not. */
  download: (url: string, maxBytes: number) => Promise<Uint8Array>;
  /** Let scripts with the executable bit in. @defaultValue false */
  allowExecutables?: boolean | undefined;
}

/** The largest archive downloaded. */
const MAX_ARCHIVE_BYTES = 20 * 1024 * 1024;

/** The folder of `root` holding the skill: `path`, the root itself, or its one folder with a SKILL.md. */
function findSkillDir(root: string, path: string | undefined): string {
  if (path) {
    const dir = join(root, path);
    if (!existsSync(join(dir, SKILL_FILE))) throw new SkillFetchError(`${path} has no ${SKILL_FILE}`);
    return dir;
  }
  if (existsSync(join(root, SKILL_FILE))) return root;
  const found: string[] = [];
  const walk = (dir: string, depth: number) => {
    if (depth > 3 || found.length > 20) return;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (!e.isDirectory() || e.name.startsWith(".")) continue;
      const child = join(dir, e.name);
      if (existsSync(join(child, SKILL_FILE))) found.push(child);
      else walk(child, depth + 1);
    }
  };
  walk(root, 1);
  if (found.length === 1) return found[0]!;
  if (found.length === 0) throw new SkillFetchError(`there is no ${SKILL_FILE} in it`);
  const names = found.map((f) => relative(root, f)).join(", ");
  throw new SkillFetchError(
    `it holds several skills (${names}): name one, e.g. owner/repo/<folder> or <url>#<folder>`,
  );
}

/** Problems of the skill folder: links anywhere in it; over-size or executable files among those installed. */
function checkSkillTree(dir: string, installed: readonly string[], allowExecutables: boolean): string[] {
  const problems: string[] = [];
  const walk = (rel: string, depth: number) => {
    if (depth > 6) return;
    for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (child === ".git") continue;
      if (e.isSymbolicLink()) problems.push(`${child} is a symbolic link`);
      else if (e.isDirectory()) walk(child, depth + 1);
      else if (!e.isFile()) problems.push(`${child} is not a regular file`);
    }
  };
  walk("", 0);
  for (const rel of installed) {
    const info = lstatSync(join(dir, rel));
    if (info.size > MAX_FILE_CHARS)
      problems.push(`${rel} is ${info.size} bytes, over the cap of ${MAX_FILE_CHARS}`);
    if (info.mode & 0o111 && !allowExecutables)
      problems.push(`${rel} is executable (install with --allow-executables to accept scripts)`);
  }
  return problems;
}

/** Fetches `source` into a temporary folder and checks it; throws SkillFetchError saying what is wrong. */
export async function fetchSkill(
  source: Exclude<RemoteSource, { kind: "local" }>,
  options: RemoteSkillOptions,
): Promise<FetchedSkill> {
  const tmp = await mkdtemp(join(tmpdir(), "herald-skill-"));
  const cleanup = () => rm(tmp, { recursive: true, force: true });
  try {
    const root = join(tmp, "source");
    let pin: string;
    if (source.kind === "git") pin = await cloneSkillRepo(source.url, source.ref, root);
    else {
      const bytes = await options.download(source.url, MAX_ARCHIVE_BYTES);
      pin = sha256(bytes);
      await mkdir(root);
      await (source.format === "zip" ? unpackZip(bytes, root) : unpackTarGz(bytes, root));
    }
    const dir = findSkillDir(root, source.path);
    const files = [SKILL_FILE, ...listSupportFiles(dir).map((f) => f.replace(/^\//, ""))];
    const problems = checkSkillTree(dir, files, options.allowExecutables ?? false);
    if (problems.length) throw new SkillFetchError(`refused:\n- ${problems.join("\n- ")}`);
    const text = await readFile(join(dir, SKILL_FILE), "utf8");
    const parsed = parseSkillMarkdown(text, SKILL_FILE);
    if ("issues" in parsed)
      throw new SkillFetchError(
        `its ${SKILL_FILE} is invalid: ${parsed.issues.map((i) => `${i.field}: ${i.message}`).join("; ")}`,
      );
    const refusal = checkSkillText(parsed.meta.name, text, { checkContent: false });
    if (refusal) throw new SkillFetchError(refusal);
    // Exactly what gets installed, in a folder of its own (the update's diff compares it).
    const view = join(tmp, parsed.meta.name);
    for (const rel of files) {
      await mkdir(join(view, rel, ".."), { recursive: true });
      await cp(join(dir, rel), join(view, rel));
    }
    return {
      name: parsed.meta.name,
      description: parsed.meta.description,
      version: parsed.meta.version,
      files: files.map((path) => ({ path, bytes: lstatSync(join(dir, path)).size })),
      kind: source.kind,
      pin,
      dir: view,
      cleanup,
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/** What `herald skills install` shows before it asks. */
export function describeFetched(
  skill: FetchedSkill,
  source: Exclude<RemoteSource, { kind: "local" }>,
): string {
  const pin = skill.kind === "git" ? `commit ${skill.pin}` : `sha256 ${skill.pin}`;
  return [
    `${skill.name}${skill.version ? ` v${skill.version}` : ""}: ${skill.description}`,
    `from ${describeSource(source)} at ${pin}`,
    "files:",
    ...skill.files.map((f) => `  ${f.path} (${f.bytes} bytes)`),
  ].join("\n");
}

/** The records of `HERALD_HOME/skills/.sources.json`, by skill name. */
export class SkillSources {
  readonly #file: string;

  constructor(userDir: string) {
    this.#file = join(userDir, ".sources.json");
  }

  all(): Record<string, SkillSourceRecord> {
    if (!existsSync(this.#file)) return {};
    return JSON.parse(readFileSync(this.#file, "utf8")) as Record<string, SkillSourceRecord>;
  }

  async set(name: string, record: SkillSourceRecord | undefined): Promise<void> {
    const all = this.all();
    if (record) all[name] = record;
    else delete all[name];
    await mkdir(join(this.#file, ".."), { recursive: true });
    await writeFile(this.#file, `${JSON.stringify(all, null, 2)}\n`);
  }
}

/** Installs a fetched skill through the store and records where it came from. */
export async function installFetched(
  store: FileSkillStore,
  sources: SkillSources,
  skill: FetchedSkill,
  spec: string,
  options: { force?: boolean } = {},
): Promise<string> {
  const result = await store.install(skill.dir, options);
  if (!result.ok) throw new SkillFetchError(result.error);
  await sources.set(skill.name, {
    spec,
    kind: skill.kind,
    pin: skill.pin,
    installedAt: new Date().toISOString(),
  });
  return result.message;
}

/** The diff from the installed skill to the fetched one (`git diff` format; empty when the same). */
export function diffInstalled(store: FileSkillStore, skill: FetchedSkill): Promise<string> {
  return diffFolders(join(store.userDir, skill.name), skill.dir);
}
