/**
 * Text written to a background process's stdin (`process write`), read as what its reader makes of it:
 * a shell runs it as commands (checked like a command line), an interpreter runs it as code (which
 * cannot be read: ask), a database client runs it as SQL; anything else takes it as data.
 */
import { classifyCommand } from "./classify.js";
import { INTERPRETERS, readsProgramFromStdin } from "./interpreters.js";
import { SHELLS } from "./nested-code.js";
import { unreadable } from "./opaque.js";
import { DESTRUCTIVE_SQL, REMOTE_RUNNERS, RULES, SQL_CLIENTS, UNPARSEABLE_RULE } from "./rules.js";
import { endsOpen, parseShell, ShellParseError } from "./shell-parse.js";
import type { CommandClassification, CommandView, DangerRule, MatchedRule, RuleContext } from "./types.js";
import { allViews } from "./views.js";

/** How a process reads its stdin. */
export type StdinReader = "shell" | "interpreter" | "sql";

/** The rule for code sent to a background interpreter (or to a process whose command cannot be read). */
export const STDIN_CODE_RULE: DangerRule = {
  id: "interpreter-stdin-code",
  description:
    "sends code to the stdin of a background interpreter (python, node, a REPL) or of a process whose command cannot be read: it cannot be checked like a shell command",
};

/** Text kept per process while a shell still waits for the rest of a command; past it: ask. */
const MAX_PENDING_CHARS = 64_000;

function redirectsStdin(view: CommandView): boolean {
  return view.redirects.some((r) => ["<", "<<", "<<-", "<<<", "<>"].includes(r.op));
}

function readerOf(view: CommandView): StdinReader | undefined {
  if (unreadable(view.command)) return "interpreter";
  if (redirectsStdin(view)) return undefined;
  const { name, args } = view;
  if (SHELLS.has(name) && readsProgramFromStdin(view)) return "shell";
  if (INTERPRETERS.test(name) && (readsProgramFromStdin(view) || args.includes("-i"))) return "interpreter";
  if (name === "ssh" && !args.some((a, k) => k > 0 && !a.startsWith("-") && !args[k - 1]?.startsWith("-")))
    return "shell";
  if (REMOTE_RUNNERS.test(name) && args.some((a) => SHELLS.has(a))) return "shell";
  if (SQL_CLIENTS.test(name) && !args.some((a) => /^-[a-zA-Z]*[cef]$|^--(command|execute|file)/.test(a)))
    return "sql";
  return undefined;
}

/**
 * What in a background command reads code from its stdin: every reader found (`bash`, `python3 -i`,
 * `ssh host`, `psql db`, `cat | sh`); empty when it takes data (`cat > log`, `./server`).
 */
export function stdinReaders(command: string): Set<StdinReader> {
  const readers = new Set<StdinReader>();
  try {
    for (const view of allViews(parseShell(command))) {
      const reader = readerOf(view);
      if (reader) readers.add(reader);
    }
  } catch (err) {
    if (!(err instanceof ShellParseError)) throw err;
    readers.add("interpreter");
  }
  return readers;
}

/**
 * The verdict on writing `data` to the stdin of a background process running `processCommand`.
 * A shell gets text piece by piece, so `pending` (what was written before and is not yet a whole
 * command: an open quote, no newline yet) is read together with `data`; the result says what stays
 * pending after this write. Pure; never throws.
 */
export function classifyWrite(
  processCommand: string,
  pending: string,
  data: string,
  context: RuleContext = {},
): { verdict: CommandClassification; pending: string } {
  const readers = stdinReaders(processCommand);
  const text = pending + data;
  const found: DangerRule[] = [];
  let next = "";
  if (readers.has("interpreter")) found.push(STDIN_CODE_RULE);
  if (readers.has("shell")) {
    const verdict = text.length > MAX_PENDING_CHARS ? undefined : classifyCommand(text, context);
    if (!verdict) found.push(UNPARSEABLE_RULE);
    else if (verdict.dangerous) found.push(...verdict.rules.map((r) => ruleById(r.id) ?? STDIN_CODE_RULE));
    else next = !text.endsWith("\n") || endsOpen(text) ? text : "";
  } else if (readers.has("sql")) {
    // A client runs SQL up to each `;`: what follows the last one waits for the rest.
    if (DESTRUCTIVE_SQL.test(text)) found.push(ruleById("sql-destructive") ?? STDIN_CODE_RULE);
    else next = text.length > MAX_PENDING_CHARS ? "" : text.slice(text.lastIndexOf(";") + 1);
  }
  if (found.length === 0) return { verdict: { dangerous: false }, pending: next };
  const rules = found.map((r) => ({ id: r.id, description: r.description }));
  return { verdict: { dangerous: true, rule: rules[0] as MatchedRule, rules }, pending: next };
}

function ruleById(id: string): DangerRule | undefined {
  return id === UNPARSEABLE_RULE.id ? UNPARSEABLE_RULE : RULES.find((r) => r.id === id);
}
