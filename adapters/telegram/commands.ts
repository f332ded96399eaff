/**
 * The bot's command menu (the list Telegram shows after `/`), from the gateway's commands: Telegram
 * takes names of 1–32 lowercase letters, digits and underscores (a hyphen becomes an underscore; the
 * gateway finds `my-skill` as `/my_skill`), descriptions of 1–256 characters, at most 100 commands.
 */
import type { CommandMenuEntry } from "../../core/types.js";

const NAME = /^[a-z0-9_]{1,32}$/;
const MAX_COMMANDS = 100;
const MAX_DESCRIPTION = 256;

/** The entries as `setMyCommands` takes them; names Telegram cannot show are left out. */
export function telegramMenu(
  entries: readonly CommandMenuEntry[],
): { command: string; description: string }[] {
  const seen = new Set<string>();
  const out: { command: string; description: string }[] = [];
  for (const entry of entries) {
    const command = entry.name.toLowerCase().replaceAll("-", "_");
    if (!NAME.test(command) || seen.has(command)) continue;
    seen.add(command);
    const description = entry.description.trim() || command;
    out.push({
      command,
      description:
        description.length > MAX_DESCRIPTION ? `${description.slice(0, MAX_DESCRIPTION - 1)}…` : description,
    });
  }
  return out.slice(0, MAX_COMMANDS);
}
