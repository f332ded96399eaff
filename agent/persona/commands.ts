/**
 * `/personality [name]`: lists the personalities (`HERALD_HOME/personalities/*.md`, and `default` for
 * SOUL.md) or switches this chat to one. The choice is kept per session key and applies from the
 * chat's next message: the switch drops the session's prompt snapshot, so the next turn takes a new one.
 */
import type { CommandModule } from "../../core/commands.js";
import type { KeyValueStore } from "../../core/types.js";
import { DEFAULT_PERSONALITY, type PersonaFiles } from "./files.js";

export interface PersonalityCommandsOptions {
  files: Pick<PersonaFiles, "personalities" | "personality" | "soul">;
  /** Each chat's choice by session key (the `personalities` key-value namespace). */
  choices: KeyValueStore;
  /** Called after a switch (inside the command's transaction): drop the session's prompt snapshot. */
  changed(sessionKey: string): void;
}

/** `/personality`. */
export function personalityCommands(options: PersonalityCommandsOptions): CommandModule {
  const { files, choices } = options;
  return {
    commands: {
      personality: {
        description: "list personalities, or switch this chat to one (/personality <name>)",
        run: ({ sessionKey, args }) => {
          const names = files.personalities();
          const current = choices.get(sessionKey) ?? DEFAULT_PERSONALITY;
          const wanted = args.trim().toLowerCase();
          if (!wanted) {
            const all = [DEFAULT_PERSONALITY, ...names].map((n) =>
              n === current ? `**${n}** (current)` : n,
            );
            const soul = files.soul() ? "SOUL.md" : "the built-in persona";
            return [
              `Personalities: ${all.join(", ")}.`,
              `\`default\` is ${soul}; others are the files in personalities/. Switch with /personality <name>.`,
            ].join("\n");
          }
          if (wanted === current) return `🎭 Already ${current}.`;
          if (wanted !== DEFAULT_PERSONALITY && !files.personality(wanted)) {
            return `There is no personality “${wanted}”. Choose one of: ${[DEFAULT_PERSONALITY, ...names].join(", ")} (add one as personalities/${wanted}.md in HERALD_HOME).`;
          }
          if (wanted === DEFAULT_PERSONALITY) choices.delete(sessionKey);
          else choices.set(sessionKey, wanted);
          options.changed(sessionKey);
          return `🎭 Personality: ${wanted}, from your next message on.`;
        },
      },
    },
  };
}
