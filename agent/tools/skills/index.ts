/**
 * The skills tools (toolset "skills"). Progressive disclosure: the system prompt lists each skill's
 * name and description; `skills_list` and `skill_view` load detail on demand; `skill_manage` turns what
 * worked into a reusable skill, or improves one, with the previous version kept for rollback.
 */
import { z } from "zod";
import { formatIssues } from "../../../skills/index.js";
import type { SkillResult, SkillsStateApi } from "../../../skills/types.js";
import { defineTool } from "../../tool-registry.js";
import type { ToolContext, ToolOutput } from "../../types.js";

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

/**
 * `skills_list`: every skill with its description, and the SKILL.md files that failed to load; with
 * `remote`, the skills the indexes of `skills.sources` offer instead (listed, never installed).
 */
export const skillsListTool = defineTool({
  name: "skills_list",
  description:
    "List the skills (saved procedures) with their descriptions and supporting files. Use skill_view to read one before following it. With remote: true, search the configured skill indexes for skills to install instead (you cannot install them; tell the user the owner can, with the /skills install command shown).",
  parameters: z.object({
    query: z
      .string()
      .trim()
      .max(200)
      .optional()
      .describe("Words that must all appear in a skill's name, description or tags."),
    remote: z
      .boolean()
      .optional()
      .describe("true: search the skill indexes for installable skills instead of the installed ones."),
  }),
  toolset: "skills",
  async execute({ query, remote }, ctx) {
    const skills = api(ctx);
    if (!skills) return unavailable;
    if (remote) {
      ctx.progress(`searching skill indexes${query ? ` for ${query}` : ""}`);
      return remoteList(skills, query);
    }
    const { skills: all, issues } = await skills.list();
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
  },
});

/** `skill_view`: a skill's full SKILL.md, or one of its referenced files. */
export const skillViewTool = defineTool({
  name: "skill_view",
  description:
    "Load a skill's full instructions (SKILL.md) before following it, or one of its supporting files (references/..., templates/..., scripts/...).",
  parameters: z.object({
    name: z.string().trim().min(1).describe("The skill's name."),
    file: z
      .string()
      .trim()
      .min(1)
      .optional()
      .describe("A supporting file of the skill, e.g. references/checklist.md; omit for SKILL.md."),
  }),
  toolset: "skills",
  async execute({ name, file }, ctx) {
    const skills = api(ctx);
    if (!skills) return unavailable;
    ctx.progress(`reading skill ${name}${file ? ` (${file})` : ""}`);
    return output(await skills.view(name, { file, countUse: !file }));
  },
});

/** `skill_manage`: create, patch, delete or roll back a skill. */
export const skillManageTool = defineTool({
  name: "skill_manage",
  description:
    "Save a reusable procedure as a skill, or improve one. Prefer patching an existing skill over creating a near-duplicate. create: a new skill (content = the whole SKILL.md: frontmatter with name and description, then short Markdown steps), or with file, a new supporting file. patch: change SKILL.md or a file (content = whole new text, or old_text + new_text). delete: remove your skill. rollback: restore the version before the last change. Never put secrets in a skill.",
  parameters: z.object({
    action: z.enum(["create", "patch", "delete", "rollback"]),
    name: z.string().trim().min(1).describe("The skill's name: lowercase letters, digits and dashes."),
    content: z
      .string()
      .optional()
      .describe(
        "create, patch: the whole file. A SKILL.md starts with '---\\nname: <name>\\ndescription: <what it does and when to use it>\\n---'.",
      ),
    old_text: z.string().optional().describe("patch: exact text to replace (unique in the file)."),
    new_text: z.string().optional().describe("patch: the replacement for old_text."),
    file: z
      .string()
      .optional()
      .describe("A supporting file (references/..., templates/..., scripts/...) instead of SKILL.md."),
  }),
  toolset: "skills",
  async execute({ action, name, content, old_text: oldText, new_text: newText, file }, ctx) {
    const skills = api(ctx);
    if (!skills) return unavailable;
    ctx.progress(`${action} skill ${name}`);
    const caller = { chat: ctx.origin.chat, userId: ctx.origin.userId };
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
  },
});

/** The skills tools, in the order the model sees them. */
export const skillsTools = [skillsListTool, skillViewTool, skillManageTool];
export { skillsStateMethods } from "./state.js";
