/**
 * Skills in chat: `/skills` lists them, `/skills install <source>` installs one for an owner (see
 * remote-chat.ts), and `/<skill-name> args` runs a turn with that skill loaded (the resolver answers a
 * `turnInput`, which the gateway uses as the turn's input).
 */
import type { CommandContext, CommandModule } from "../core/commands.js";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { formatIssues } from "./issues.js";
import { fitsPlatform } from "./loader.js";
import { skillTurnInput } from "./prompt.js";
import { installCommand } from "./remote-chat.js";
import type { RemoteSkillsPort } from "./remote-index.js";
import type { FileSkillStore } from "./store.js";

/** `/skills` (and `/skills install`) and the `/<skill-name>` resolver (names no command claims). */
export function skillCommands(
  storeOf: FileSkillStore | ((ctx: CommandContext) => FileSkillStore),
  logger: Logger,
  remote: RemoteSkillsPort,
): CommandModule {
  // A chat's skills are its agent's (`agents[].skills_dir`): the caller picks the store per command.
  const pick = (ctx: CommandContext) => (typeof storeOf === "function" ? storeOf(ctx) : storeOf);
  return {
    commands: {
      skills: {
        description: "list the skills; /<skill-name> <request> runs one; owner: /skills install <source>",
        run: (ctx) => {
          const { message, args } = ctx;
          const store = pick(ctx);
          const install = /^install(?:\s+([\s\S]*))?$/i.exec(args.trim());
          if (install) return installCommand(ctx, install[1] ?? "", store, remote, logger);
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
      },
    },
    resolvers: [
      (name, ctx) => {
        const store = pick(ctx);
        const skill = store.find(name);
        if (!skill || !fitsPlatform(skill.meta, ctx.message.platform)) return undefined;
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
      },
    ],
  };
}
