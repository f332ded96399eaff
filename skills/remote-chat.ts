/**
 * `/skills install <source>` in chat, for owners: the same fetch and checks as `herald skills install`,
 * with nothing installed at first. The answer shows the skill (files, sizes, pin) with an Install
 * button whose click, like the same command typed, sends `/skills install <source> --yes <id>`, `<id>`
 * the start of the previewed pin. The confirmation fetches the source again and installs only if its
 * pin still starts with `<id>`: a source that changed between preview and confirmation is refused.
 * Scripts (executable files) and replacing a skill of the same name stay with the command line.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { CommandContext, CommandResult } from "../core/commands.js";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { describeFetched, type FetchedSkill, fetchSkill, installFetched, SkillSources } from "./remote.js";
import type { RemoteSkillsPort } from "./remote-index.js";
import { parseSkillSource, type RemoteSource } from "./remote-source.js";
import type { FileSkillStore } from "./store.js";

/** How many hex digits of the pin the confirmation carries. */
const ID_CHARS = 16;

const USAGE =
  "Usage: /skills install <source>: a git URL (…/repo.git[//folder][#ref]), an https URL of a .zip or .tar.gz ([#folder]), or owner/repo[/folder][@ref].";

type Remote = Exclude<RemoteSource, { kind: "local" }>;

/** What `/skills install …` answers (`args`: what follows `install`). */
export function installCommand(
  ctx: CommandContext,
  args: string,
  store: FileSkillStore,
  remote: RemoteSkillsPort,
  logger: Logger,
): CommandResult {
  if (!ctx.isOwner) return "Only the owner can install skills.";
  const m = /^(\S+)(?:\s+--yes(?:\s+(\S+))?)?$/.exec(args.trim());
  if (!m) return USAGE;
  const [, spec = "", id] = m;
  const confirming = /\s--yes\b/.test(args);
  if (confirming && !/^[0-9a-f]{8,64}$/i.test(id ?? ""))
    return `To confirm, give the id the preview showed: /skills install ${spec} --yes <id>. Send /skills install ${spec} to see it.`;
  let source: RemoteSource;
  try {
    source = parseSkillSource(spec);
  } catch (err) {
    return `${err instanceof Error ? err.message : String(err)}\n${USAGE}`;
  }
  if (source.kind === "local")
    return `From chat, skills come from a git URL, an archive URL or owner/repo; a folder on this machine installs with \`herald skills install ${spec}\`.`;
  const fetched = source;
  const run = (what: (skill: FetchedSkill) => Promise<CommandAnswer>) => async (): Promise<CommandAnswer> => {
    try {
      const skill = await fetchSkill(fetched, { download: remote.download });
      try {
        return await what(skill);
      } finally {
        await skill.cleanup();
      }
    } catch (err) {
      logger.warn({ source: spec, error: describeError(err) }, "skill not installed from chat");
      return refusal(spec, err instanceof Error ? err.message : String(err));
    }
  };
  if (confirming)
    return {
      notice: `📦 Installing ${spec}…`,
      answer: run((skill) => confirm(store, skill, spec, id!.toLowerCase())),
    };
  return {
    notice: `📦 Fetching ${spec}…`,
    answer: run(async (skill) => preview(store, skill, fetched, spec)),
  };
}

type CommandAnswer = Awaited<ReturnType<Extract<CommandResult, { answer: unknown }>["answer"]>>;

function refusal(spec: string, why: string): string {
  const scripts = why.includes("--allow-executables")
    ? `\nScripts install from the command line only: \`herald skills install ${spec} --allow-executables\`.`
    : "";
  return `Not installed: ${spec}: ${why}${scripts}`;
}

/** The preview: what would be installed, and the Install button (or nothing to confirm, when taken). */
function preview(store: FileSkillStore, skill: FetchedSkill, source: Remote, spec: string): CommandAnswer {
  const shown = `\`\`\`\n${describeFetched(skill, source)}\n\`\`\``;
  if (existsSync(join(store.userDir, skill.name)))
    return `${shown}\nA skill of yours named ${skill.name} exists already: update it with \`herald skills update ${skill.name}\`, or remove it first (\`herald skills remove ${skill.name}\`).`;
  const confirmation = `/skills install ${spec} --yes ${skill.pin.slice(0, ID_CHARS)}`;
  return {
    reply: `${shown}\nNothing is installed yet. Install it with the button, or send \`${confirmation}\`.`,
    buttons: [[{ label: "Install", data: confirmation }]],
  };
}

/** Installs `skill` if its pin is the one previewed. */
async function confirm(
  store: FileSkillStore,
  skill: FetchedSkill,
  spec: string,
  id: string,
): Promise<string> {
  if (!skill.pin.startsWith(id))
    return `Not installed: ${spec} changed since the preview (it was ${id}, it is now ${skill.pin.slice(0, ID_CHARS)}). Send /skills install ${spec} to see it again.`;
  const message = await installFetched(store, new SkillSources(store.userDir), skill, spec);
  return `${message}\nIt is listed by /skills; new sessions have it in their prompt.`;
}
