import { RULES, UNPARSEABLE_RULE } from "./rules.js";
import { parseShell, ShellParseError } from "./shell-parse.js";
import type { CommandClassification, CommandView, DangerRule, MatchedRule, RuleContext } from "./types.js";
import { allViews } from "./views.js";

function verdict(found: DangerRule[]): CommandClassification {
  if (found.length === 0) return { dangerous: false };
  const rules: MatchedRule[] = found.map((r) => ({ id: r.id, description: r.description }));
  return { dangerous: true, rule: rules[0] as MatchedRule, rules };
}

/**
 * Decides whether a shell command line needs a person's approval before it runs. The line is split
 * shell-style (quotes, `;`, `&&`, `||`, pipes, `$(…)`, backticks, `sh -c` strings, wrappers such as
 * `sudo`, `env`, `xargs`) and every resulting command is tested against the rule table: the rules for
 * what is dangerous, then the rules for what cannot be read before it runs (a command name from a
 * variable, code handed to an interpreter, a script the line wrote itself…). The verdict names the
 * first rule that matched and lists every one. Pure and synchronous; never throws.
 * @param options.workspaceDir the directory commands run in; without it, relative paths count as inside
 *   the working directory and absolute ones as outside.
 */
export function classifyCommand(command: string, options: RuleContext = {}): CommandClassification {
  const found = RULES.filter((rule) => rule.matchRaw?.(command));
  let views: CommandView[];
  try {
    views = allViews(parseShell(command));
  } catch (err) {
    if (err instanceof ShellParseError) return verdict([...found, UNPARSEABLE_RULE]);
    throw err;
  }
  for (const rule of RULES) {
    if (found.includes(rule)) continue;
    const hit = rule.match
      ? views.some((view) => rule.match?.(view, options))
      : rule.matchViews?.(views, options) === true;
    if (hit) found.push(rule);
  }
  return verdict(found);
}

/**
 * The key under which "/approve always" remembers a rule for a session: every later command matching
 * only granted rules runs without asking. Keys are stable across releases as long as rule ids are.
 */
export function patternKey(rule: Pick<MatchedRule, "id">): string {
  return `rule:${rule.id}`;
}
