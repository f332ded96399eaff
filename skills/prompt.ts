/**
 * How skills reach the model: the index section of the system prompt (names and descriptions only,
 * so the prompt stays small however many skills there are) and the turn input of a `/<skill> args`
 * invocation (the whole skill, loaded for that turn).
 */
import { fitsPlatform } from "./loader.js";
import type { Skill } from "./types.js";

/** Most skills the index lists; the rest are found with `skills_list`. */
const MAX_INDEXED = 80;
const MAX_DESCRIPTION_CHARS = 240;

/** The system prompt's skills section for a chat platform, or undefined when no skill is usable there. */
export function skillsPromptSection(skills: readonly Skill[], platform: string): string | undefined {
  const usable = skills.filter((s) => !s.unavailable && fitsPlatform(s.meta, platform));
  if (usable.length === 0) return undefined;
  const lines = usable.slice(0, MAX_INDEXED).map((s) => `- ${s.meta.name}: ${cut(s.meta.description)}`);
  const more = usable.length > MAX_INDEXED ? [`(${usable.length - MAX_INDEXED} more: see skills_list)`] : [];
  return [
    "## Skills",
    "Skills are saved procedures. When a request matches one, load it with skill_view first and follow it. When you work out a reusable procedure, save it with skill_manage (patch an existing skill rather than creating a near-duplicate).",
    ...lines,
    ...more,
  ].join("\n");
}

/** The input of a turn the user started with `/<skill> args`: the skill's instructions, then the request. */
export function skillTurnInput(skill: Skill, args: string): string {
  const files = skill.files.length
    ? `\n\nSupporting files (load with skill_view and file): ${skill.files.join(", ")}`
    : "";
  return [
    `The user invoked the skill "${skill.meta.name}". Follow its instructions for the request below.`,
    "",
    `<skill name="${skill.meta.name}">`,
    `${skill.body}${files}`,
    "</skill>",
    "",
    `Request: ${args.trim() || "(none given; ask what they need if the skill requires input)"}`,
  ].join("\n");
}

function cut(text: string): string {
  const oneLine = text.replace(/\s+/g, " ").trim();
  return oneLine.length > MAX_DESCRIPTION_CHARS ? `${oneLine.slice(0, MAX_DESCRIPTION_CHARS - 1)}…` : oneLine;
}
