/** The skills tools' declarations; their implementation (`impl.ts`) loads on the first call. */

import { z } from "zod";
import { declareTool } from "../../tool-declaration.js";

/** `skills_list`'s arguments. */
export const skillsListParameters = z.object({
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
});

/** `skill_view`'s arguments. */
export const skillViewParameters = z.object({
  name: z.string().trim().min(1).describe("The skill's name."),
  file: z
    .string()
    .trim()
    .min(1)
    .optional()
    .describe("A supporting file of the skill, e.g. references/checklist.md; omit for SKILL.md."),
});

/** `skill_manage`'s arguments. */
export const skillManageParameters = z.object({
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
});

/**
 * `skills_list`: every skill with its description, and the SKILL.md files that failed to load; with
 * `remote`, the skills the indexes of `skills.sources` offer instead (listed, never installed).
 */
export const skillsListTool = declareTool({
  name: "skills_list",
  description:
    "List the skills (saved procedures) with their descriptions and supporting files. Use skill_view to read one before following it. With remote: true, search the configured skill indexes for skills to install instead (you cannot install them; tell the user the owner can, with the /skills install command shown).",
  parameters: skillsListParameters,
  toolset: "skills",
  implementation: () => import("./impl.js").then((m) => m.runSkillsList),
});

/** `skill_view`: a skill's full SKILL.md, or one of its referenced files. */
export const skillViewTool = declareTool({
  name: "skill_view",
  description:
    "Load a skill's full instructions (SKILL.md) before following it, or one of its supporting files (references/..., templates/..., scripts/...).",
  parameters: skillViewParameters,
  toolset: "skills",
  implementation: () => import("./impl.js").then((m) => m.runSkillView),
});

/** `skill_manage`: create, patch, delete or roll back a skill. */
export const skillManageTool = declareTool({
  name: "skill_manage",
  description:
    "Save a reusable procedure as a skill, or improve one. Prefer patching an existing skill over creating a near-duplicate. create: a new skill (content = the whole SKILL.md: frontmatter with name and description, then short Markdown steps), or with file, a new supporting file. patch: change SKILL.md or a file (content = whole new text, or old_text + new_text). delete: remove your skill. rollback: restore the version before the last change. Never put secrets in a skill.",
  parameters: skillManageParameters,
  toolset: "skills",
  implementation: () => import("./impl.js").then((m) => m.runSkillManage),
});

/** The skills tools, in the order the model sees them. */
export const skillsTools = [skillsListTool, skillViewTool, skillManageTool];
