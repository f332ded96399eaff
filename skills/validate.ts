/**
 * Checks for skill content written by the agent or installed by a user: size caps, the frontmatter
 * schema, supporting-file paths that stay inside the skill's folder, and the content checks memory
 * uses (no secrets, no instructions aimed at the system). Each check returns a refusal phrased for the
 * model, or undefined.
 */
import { existsSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import { parseSkillMarkdown, SKILL_NAME, SUPPORT_DIRS } from "./loader.js";
import { checkContent } from "./memory/guard.js";

/** Cap of a SKILL.md in characters (it is loaded whole into a turn). */
export const MAX_SKILL_CHARS = 20_000;
/** Cap of one supporting file in characters. */
export const MAX_FILE_CHARS = 100_000;

/** A refusal when `name` cannot be a skill name. */
export function checkName(name: string): string | undefined {
  if (SKILL_NAME.test(name)) return undefined;
  return `refused: '${name}' is not a valid skill name. Use lowercase letters, digits and dashes, e.g. 'deploy-checklist'.`;
}

/**
 * A refusal when `text` is not a valid SKILL.md for `name`.
 * @param options.checkContent also refuse secrets and instructions aimed at the system. @defaultValue true
 */
export function checkSkillText(
  name: string,
  text: string,
  options: { checkContent?: boolean } = {},
): string | undefined {
  if (text.length > MAX_SKILL_CHARS) {
    return `refused: SKILL.md would be ${text.length.toLocaleString("en-US")} characters; the cap is ${MAX_SKILL_CHARS.toLocaleString("en-US")}. Keep the instructions short and move detail into references/ files.`;
  }
  const parsed = parseSkillMarkdown(text, "SKILL.md");
  if ("issues" in parsed) {
    const list = parsed.issues.map((i) => `${i.field}: ${i.message}`).join("; ");
    return `refused: the frontmatter is invalid (${list}). SKILL.md starts with:\n---\nname: ${name}\ndescription: what it does and when to use it\n---\nthen the instructions in Markdown.`;
  }
  if (parsed.meta.name !== name)
    return `refused: the frontmatter name is '${parsed.meta.name}' but the skill is '${name}'; they must match.`;
  if (!parsed.body) return "refused: the skill has no instructions after the frontmatter.";
  return options.checkContent === false ? undefined : checkContent(text);
}

/** A refusal when a supporting file's text is too big or unsafe. */
export function checkFileText(text: string): string | undefined {
  if (text.length > MAX_FILE_CHARS) {
    return `refused: the file would be ${text.length.toLocaleString("en-US")} characters; the cap is ${MAX_FILE_CHARS.toLocaleString("en-US")}.`;
  }
  return checkContent(text);
}

/**
 * The absolute path of a supporting file `file` (relative, under references/, templates/ or scripts/)
 * inside `skillDir`, or a refusal. Symlinks that lead out of the folder are refused too.
 */
export function resolveSupportPath(skillDir: string, file: string): { path: string } | { error: string } {
  const refuse = (why: string) => ({
    error: `refused: '${file}' ${why}. Give a path inside the skill such as references/notes.md, templates/report.md or scripts/run.sh.`,
  });
  if (!file || file.length > 200) return refuse("is empty or too long");
  if (file.includes("\0") || file.includes("\\")) return refuse("contains a backslash or NUL");
  if (isAbsolute(file) || /^[a-zA-Z]:/.test(file)) return refuse("is absolute");
  const parts = file.split("/");
  if (parts.some((p) => p === "" || p === "." || p === "..")) return refuse("leaves the skill's folder");
  if (!(SUPPORT_DIRS as readonly string[]).includes(parts[0]!) || parts.length < 2)
    return refuse(`is not under ${SUPPORT_DIRS.join("/, ")}/`);
  const root = resolve(skillDir);
  const path = resolve(root, file);
  if (!path.startsWith(root + sep)) return refuse("leaves the skill's folder");
  // The deepest part that exists must really be inside the folder (a symlink could point anywhere).
  let probe = path;
  while (!existsSync(probe) && probe !== root) probe = dirname(probe);
  if (existsSync(root) && existsSync(probe)) {
    const real = relative(realpathSync(root), realpathSync(probe));
    if (real.startsWith("..") || isAbsolute(real))
      return refuse("leads out of the skill's folder through a link");
  }
  return { path };
}
