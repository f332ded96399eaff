/**
 * `herald skills install <source>` for remote sources, `update` and `remove`: fetched through
 * skills/remote.ts, shown, then applied with `--yes` or the user's answer on a terminal.
 */
import { resolve } from "node:path";
import { createInterface } from "node:readline/promises";
import type { Command } from "commander";
import {
  describeFetched,
  diffInstalled,
  type FileSkillStore,
  fetchSkill,
  installFetched,
  parseSkillSource,
  type RemoteSkillOptions,
  type RemoteSource,
  type SkillSourceRecord,
  SkillSources,
  searchIndexes,
} from "../../skills/index.js";
import type { HeraldConfig } from "../config.js";
import { skillDownload } from "../skill-download.js";
import { cliAction } from "./action.js";

const run = <A extends unknown[]>(fn: (...args: A) => Promise<void>) => cliAction(fn);
const out = (text: string) => process.stdout.write(`${text}\n`);
type Context = () => { config: HeraldConfig; store: FileSkillStore };

/** Archives through the guarded fetch: public addresses only unless `web.allow_private`. */
function remoteOptions(config: HeraldConfig, allowExecutables: boolean | undefined): RemoteSkillOptions {
  return { allowExecutables, download: skillDownload(config) };
}

/** Yes with `--yes`; else asks on a terminal; elsewhere says how to confirm and answers no. */
async function confirm(question: string, yes: boolean | undefined): Promise<boolean> {
  if (yes) return true;
  if (!process.stdin.isTTY) {
    out("Nothing changed: run again with --yes to confirm.");
    return false;
  }
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
  } finally {
    rl.close();
  }
}

/** Fetches one recorded skill again, shows the diff and replaces it when confirmed. */
async function updateOne(
  store: FileSkillStore,
  sources: SkillSources,
  skillName: string,
  record: SkillSourceRecord,
  source: Exclude<RemoteSource, { kind: "local" }>,
  opts: { config: HeraldConfig; yes?: boolean | undefined; allowExecutables?: boolean | undefined },
): Promise<void> {
  const skill = await fetchSkill(source, remoteOptions(opts.config, opts.allowExecutables));
  try {
    if (skill.name !== skillName)
      throw new Error(
        `${record.spec} now holds the skill ${skill.name}, not ${skillName}: remove and install it`,
      );
    const diff = await diffInstalled(store, skill);
    if (skill.pin === record.pin && !diff) {
      out(`${skillName}: up to date (${record.pin.slice(0, 12)})`);
      return;
    }
    out(`${skillName}: ${record.pin.slice(0, 12)} → ${skill.pin.slice(0, 12)}`);
    out(diff || "(no change to the installed files)");
    if (!(await confirm(`Update ${skillName}?`, opts.yes))) return;
    out(await installFetched(store, sources, skill, record.spec, { force: true }));
  } finally {
    await skill.cleanup();
  }
}

/** Adds `install`, `update`, `remove` and `search` to the `skills` command group. */
export function registerRemoteSkillCommands(skills: Command, context: Context): void {
  addInstall(skills, context);
  addUpdate(skills, context);
  addRemove(skills, context);
  addSearch(skills, context);
}

function addSearch(skills: Command, context: Context): void {
  skills
    .command("search [query...]")
    .description("look for skills in the indexes of skills.sources (HERALD_SKILLS_SOURCES)")
    .action(
      run(async (words: string[]) => {
        const { config } = context();
        if (config.skills.sources.length === 0)
          throw new Error(
            "no skill indexes configured: list their URLs in skills.sources (config.yaml) or HERALD_SKILLS_SOURCES",
          );
        const { found, failed } = await searchIndexes(
          config.skills.sources,
          words.join(" "),
          remoteOptions(config, false).download,
        );
        for (const s of found)
          out(
            `${s.name}${s.version ? ` v${s.version}` : ""} — ${s.description}\n  herald skills install ${s.source}`,
          );
        if (found.length === 0) out("No skill matches.");
        for (const f of failed) out(`⚠️ ${f.index}: ${f.error}`);
        if (failed.length) process.exitCode = 1;
      }),
    );
}

function addInstall(skills: Command, context: Context): void {
  skills
    .command("install <source>")
    .description(
      "install a skill: a folder here, a git URL (…/repo.git[//path][#ref], file://…), an https URL of a .zip or .tar.gz ([#path]), or owner/repo[/path][@ref]",
    )
    .option("--force", "replace a user skill of the same name (the old one is kept as a version)")
    .option("--yes", "install a remote skill without asking (it is shown first)")
    .option("--allow-executables", "accept files with the executable bit (scripts)")
    .action(
      run(async (spec: string, opts: { force?: boolean; yes?: boolean; allowExecutables?: boolean }) => {
        const { config, store } = context();
        const source = parseSkillSource(spec);
        if (source.kind === "local") {
          const result = await store.install(resolve(source.dir), { force: opts.force });
          if (!result.ok) throw new Error(result.error);
          out(result.message);
          return;
        }
        const skill = await fetchSkill(source, remoteOptions(config, opts.allowExecutables));
        try {
          out(describeFetched(skill, source));
          if (!(await confirm(`Install ${skill.name}?`, opts.yes))) return;
          out(
            await installFetched(store, new SkillSources(store.userDir), skill, spec, { force: opts.force }),
          );
        } finally {
          await skill.cleanup();
        }
      }),
    );
}

function addUpdate(skills: Command, context: Context): void {
  skills
    .command("update [name]")
    .description(
      "fetch installed remote skills again; show the diff, then replace (with --yes or your answer)",
    )
    .option("--yes", "apply the updates without asking (the diff is shown first)")
    .option("--allow-executables", "accept files with the executable bit (scripts)")
    .action(
      run(async (name: string | undefined, opts: { yes?: boolean; allowExecutables?: boolean }) => {
        const { config, store } = context();
        const sources = new SkillSources(store.userDir);
        const records = Object.entries(sources.all()).filter(([n]) => !name || n === name);
        if (name && records.length === 0) throw new Error(`${name} was not installed from a remote source`);
        if (records.length === 0) out("No skills installed from remote sources.");
        for (const [skillName, record] of records) {
          const source = parseSkillSource(record.spec);
          if (source.kind === "local") continue;
          await updateOne(store, sources, skillName, record, source, { config, ...opts });
        }
      }),
    );
}

function addRemove(skills: Command, context: Context): void {
  skills
    .command("remove <name>")
    .description("delete a user skill (a version is kept; skill_manage rollback restores it)")
    .action(
      run(async (name: string) => {
        const { store } = context();
        const result = await store.manage({ action: "delete", name });
        if (!result.ok) throw new Error(result.error);
        await new SkillSources(store.userDir).set(name, undefined);
        out(`Removed ${name}.`);
      }),
    );
}
