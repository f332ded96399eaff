/** What the skills tools do (`declaration.ts` declares them). */
import { callerOfOrigin } from "../../../core/access.js";
import { formatIssues } from "../../../skills/index.js";
import type { SkillResult, SkillsStateApi } from "../../../skills/types.js";
import type { ToolRun } from "../../tool-declaration.js";
import type { ToolContext, ToolOutput } from "../../types.js";
import type { skillManageParameters, skillsListParameters, skillViewParameters } from "./declaration.js";

function api(ctx: ToolContext): SkillsStateApi | undefined {
  return ctx.state.skills;
}

const unavailable: ToolOutput = { content: "error: skills are not available here.", isError: true };

function output(result: SkillResult): ToolOutput | string {
  return result.ok ? result.message : { content: `error: ${result.error}`, isError: true };
}

/** Whether every word of `query` is in `text` (any case). */
function matches(text: string, query: string | undefined): boolean {
  const hay = text.toLowerCase();
  return (query ?? "")
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((w) => hay.includes(w));
}

/** What the skill indexes list for `query`: each match with its install source, for the owner to install. */
async function remoteList(skills: SkillsStateApi, query: string | undefined): Promise<ToolOutput | string> {
  const { indexes, found, failed } = await skills.search(query ?? "");
  if (indexes === 0) return "No skill indexes are configured (the owner lists their URLs in skills.sources).";
  const lines = found.map(
    (s) =>
      `- ${s.name}${s.version ? ` v${s.version}` : ""}: ${s.description} (install: /skills install ${s.source})`,
  );
  const head = found.length
    ? `${found.length} skill${found.length === 1 ? "" : "s"} in the indexes (not installed; only the owner can install one, by sending /skills install <source>):`
    : `No skill in the indexes matches${query ? ` "${query}"` : ""}.`;
  const errors = failed.map((f) => `(index ${f.index} unreadable: ${f.error})`);
  if (!found.length && failed.length === indexes)
    return { content: `error: no skill index could be read.\n${errors.join("\n")}`, isError: true };
  return [head, ...lines, ...errors].join("\n");
}

/** Runs one `skills_list` call. */
export const runSkillsList: ToolRun<typeof skillsListParameters> = async ({ query, remote }, ctx) => {
  const skills = api(ctx);
  if (!skills) return unavailable;
  if (remote) {
    ctx.progress(`searching skill indexes${query ? ` for ${query}` : ""}`);
    return remoteList(skills, query);
  }
  const { skills: all, issues } = await skills.list(callerOfOrigin(ctx.origin));
  const list = all.filter((s) => matches(`${s.name} ${s.description}`, query));
  const lines = list.map((s) => {
    const extra = [
      s.source === "user" ? "yours" : "bundled",
      s.version ? `v${s.version}` : "",
      s.files.length ? `files: ${s.files.join(", ")}` : "",
      s.unavailable ? `unavailable: ${s.unavailable}` : "",
    ]
      .filter(Boolean)
      .join("; ");
    return `- ${s.name}: ${s.description} (${extra})`;
  });
  const none = query ? `No skill matches "${query}".` : "No skills yet.";
  const head = list.length ? `${list.length} skill${list.length === 1 ? "" : "s"}:` : none;
  return [head, ...lines, ...formatIssues(issues)].join("\n");
};

/** Runs one `skill_view` call. */
export const runSkillView: ToolRun<typeof skillViewParameters> = async ({ name, file }, ctx) => {
  const skills = api(ctx);
  if (!skills) return unavailable;
  ctx.progress(`reading skill ${name}${file ? ` (${file})` : ""}`);
  return output(await skills.view(name, { file, countUse: !file }, callerOfOrigin(ctx.origin)));
};

/** Runs one `skill_manage` call. */
export const runSkillManage: ToolRun<typeof skillManageParameters> = async (
  { action, name, content, old_text: oldText, new_text: newText, file },
  ctx,
) => {
  const skills = api(ctx);
  if (!skills) return unavailable;
  ctx.progress(`${action} skill ${name}`);
  const caller = callerOfOrigin(ctx.origin);
  switch (action) {
    case "create":
      if (!content?.trim()) return { content: "error: create needs content.", isError: true };
      return output(await skills.manage({ action, name, content, file }, caller));
    case "patch":
      if (content === undefined && oldText === undefined)
        return { content: "error: patch needs content, or old_text and new_text.", isError: true };
      return output(await skills.manage({ action, name, content, oldText, newText, file }, caller));
    default:
      return output(await skills.manage({ action, name }, caller));
  }
};
