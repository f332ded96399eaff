import { RULES, UNPARSEABLE_RULE } from "./rules.js";
import { parseShell, ShellParseError } from "./shell-parse.js";
import type { CommandClassification, CommandView, DangerRule, MatchedRule, RuleContext } from "./types.js";
import { allViews } from "./views.js";

function matched(rule: DangerRule): CommandClassification {
  return { dangerous: true, rule: { id: rule.id, description: rule.description } };
}

/**
 * Decides whether a shell command line needs a person's approval before it runs. The line is split
 * shell-style (quotes, `;`, `&&`, `||`, pipes, `$(…)`, backticks, `sh -c` strings, wrappers such as
 * `sudo`, `env`, `xargs`) and every resulting command is tested against the rule table; the first rule
 * that matches is returned. Pure and synchronous; never throws.
 * @param options.workspaceDir the directory commands run in; without it, relative paths count as inside
 *   the working directory and absolute ones as outside.
 */
export function classifyCommand(command: string, options: RuleContext = {}): CommandClassification {
  for (const rule of RULES) if (rule.matchRaw?.(command)) return matched(rule);
  let views: CommandView[];
  try {
    views = allViews(parseShell(command));
  } catch (err) {
    if (err instanceof ShellParseError) return matched(UNPARSEABLE_RULE);
    throw err;
  }
  for (const rule of RULES) {
    if (rule.match && views.some((view) => rule.match?.(view, options))) return matched(rule);
  }
  return { dangerous: false };
}

/**
 * The key under which "/approve always" remembers a rule for a session: every later command matching
 * the same rule runs without asking. Keys are stable across releases as long as rule ids are.
 */
export function patternKey(rule: Pick<MatchedRule, "id">): string {
  return `rule:${rule.id}`;
}
