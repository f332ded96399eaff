/**
 * Skills in chat: `/skills` lists them, and `/<skill-name> args` runs a turn with that skill loaded
 * (the command returns a `turnInput`, which the runner uses as the turn's input).
 */

import type { CommandResult } from "../core/commands.js";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { CommandRegistry } from "../gateway/commands.js";
import { fitsPlatform } from "./loader.js";
import { skillTurnInput } from "./prompt.js";
import type { FileSkillStore } from "./store.js";
import { formatIssues } from "./tools.js";

/**
 * Registers `/skills` and the `/<skill-name>` fallback (names no command claims). A fallback set
 * before is kept and asked when no skill has the name.
 */
export function registerSkillCommands(
  commands: CommandRegistry,
  store: FileSkillStore,
  logger: Logger,
): void {
  commands.register("skills", {
    description: "list the skills; /<skill-name> <request> runs one",
    run: ({ message }) => {
      const { skills, issues } = store.catalog();
      const usable = skills.filter((s) => fitsPlatform(s.meta, message.platform));
      const lines = usable.map(
        (s) =>
          `/${s.meta.name} — ${s.meta.description}${s.unavailable ? ` (unavailable: ${s.unavailable})` : ""}`,
      );
      return [
        usable.length ? "Skills (run one with /<name> <request>):" : "No skills yet.",
        ...lines,
        ...formatIssues(issues),
      ].join("\n");
    },
  });

  const previous = commands.fallback;
  commands.fallback = (name, ctx): CommandResult | undefined => {
    const skill = store.find(name);
    if (!skill || !fitsPlatform(skill.meta, ctx.message.platform)) return previous?.(name, ctx);
    if (skill.unavailable) return `The skill ${name} cannot run here: ${skill.unavailable}.`;
    return {
      turnInput: skillTurnInput(skill, ctx.args),
      after: () => {
        store
          .recordUse(name)
          .catch((err: unknown) =>
            logger.warn({ skill: name, error: describeError(err) }, "skill use not recorded"),
          );
      },
    };
  };
}
