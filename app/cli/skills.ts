/**
 * `herald skills list|show|install|update|remove|curate`: the skills on this machine (bundled and the
 * user's in `HERALD_HOME/skills/`, or with `--agent <name>` that agent's `skills_dir`), without starting
 * the gateway. `install` also takes git URLs,
 * archive URLs and `owner/repo/path` (see skills/remote.ts), shown before they are installed. Safe to run beside a running gateway: writes
 * take the same lock the gateway's tools take.
 */
import { resolve } from "node:path";
import type { Command } from "commander";
import { HeraldError } from "../../core/errors.js";
import { bundledSkillsDir, curateSkills, FileSkillStore, formatIssues } from "../../skills/index.js";
import { agentProfiles } from "../agents.js";
import { loadConfig } from "../config.js";
import { cliAction } from "./action.js";
import { registerRemoteSkillCommands } from "./skills-remote.js";

const run = <A extends unknown[]>(fn: (...args: A) => Promise<void>) => cliAction(fn);

/** The config and the skill store of `agent` (its `skills_dir`), else the shared folder's. */
function context(agent?: string | undefined) {
  const config = loadConfig();
  const profile = agent && agent !== "default" ? agentProfiles(config).get(agent) : undefined;
  if (agent && agent !== "default" && !profile) {
    const names = ["default", ...config.agents.map((a) => a.name)].join(", ");
    throw new HeraldError(`there is no agent '${agent}'; the agents are ${names}`, { code: "invalid_input" });
  }
  const store = new FileSkillStore({
    bundledDir: bundledSkillsDir(),
    userDir: profile?.skillsDir ?? resolve(config.homeDir, "skills"),
  });
  return { config, store };
}

const out = (text: string) => process.stdout.write(`${text}\n`);

/** Adds the `skills` command group to the `herald` program. */
export function registerSkillsCommands(program: Command): void {
  const skills = program
    .command("skills")
    .description("list, show, install, update, remove, search and curate skills")
    .option(
      "--agent <name>",
      "the skills of this agent (its agents[].skills_dir); default: the shared folder",
    );
  const agentContext = () => context(skills.opts<{ agent?: string }>().agent);

  skills
    .command("list")
    .description("the skills the agent can use, and SKILL.md files that failed to load")
    .action(
      run(async () => {
        const { store } = agentContext();
        const { skills: list, issues } = await store.list();
        const usage = store.usage();
        for (const s of list) {
          const uses = usage[s.name]?.uses ?? 0;
          const flags = [s.source, s.version ? `v${s.version}` : "", `${uses} use${uses === 1 ? "" : "s"}`]
            .filter(Boolean)
            .join(", ");
          out(
            `${s.name}  (${flags})${s.unavailable ? `  [unavailable: ${s.unavailable}]` : ""}\n  ${s.description}`,
          );
        }
        if (list.length === 0) out("No skills.");
        for (const line of formatIssues(issues)) out(line);
        if (issues.length) process.exitCode = 1;
      }),
    );

  skills
    .command("show <name> [file]")
    .description("print a skill's SKILL.md, or one of its files (references/…, templates/…, scripts/…)")
    .action(
      run(async (name: string, file: string | undefined) => {
        const result = await agentContext().store.view(name, { file });
        if (!result.ok) throw new Error(result.error);
        out(result.message);
      }),
    );

  registerRemoteSkillCommands(skills, agentContext);

  skills
    .command("curate")
    .description("grade skills by use, merge near-duplicates, archive unused ones; writes a report")
    .option("--dry-run", "report only, change nothing")
    .option("--archive-after-days <n>", "archive user skills unused this long", (v) => Number.parseInt(v, 10))
    .action(
      run(async (opts: { dryRun?: boolean; archiveAfterDays?: number }) => {
        const { config, store } = agentContext();
        const report = await curateSkills({
          store,
          reportDir: resolve(config.homeDir, "logs", "curator"),
          archiveAfterDays: opts.archiveAfterDays ?? config.learning.archiveAfterDays,
          dryRun: opts.dryRun,
        });
        const grades = report.graded.map((g) => `${g.grade} ${g.name} (${g.uses} uses)`).join("\n  ");
        out(`Graded:\n  ${grades || "no skills"}`);
        out(`Merged: ${report.merged.map((m) => `${m.merged} → ${m.kept}`).join(", ") || "none"}`);
        out(`Archived: ${report.archived.join(", ") || "none"}${opts.dryRun ? " (dry run)" : ""}`);
        out(`Report: ${report.reportPath}`);
      }),
    );
}
