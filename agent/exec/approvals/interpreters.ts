/**
 * Programs that run code they are handed: shells and the other interpreters, which options give them
 * code on the command line (`python -c`, `perl -e`, `node -e`, `php -r`…), and where else they read
 * their program (a script operand, or stdin).
 */
import { operandsOf, optionsOf } from "./args.js";
import { SHELLS } from "./nested-code.js";
import type { Word } from "./shell-parse.js";
import type { CommandView } from "./types.js";

/** Interpreters other than the shells, by the command's base name (lowercased). */
export const INTERPRETERS =
  /^(python[0-9.]*|pypy[0-9.]*|perl[0-9.]*|ruby[0-9.]*|node|nodejs|bun|deno|php[0-9.]*|lua[0-9.]*|luajit|rscript|r|osascript|pwsh|powershell|julia|tclsh[0-9.]*|wish|expect|irb|jshell|groovy)$/;

/** True for a shell or another interpreter. */
export function runsCode(name: string): boolean {
  return SHELLS.has(name) || INTERPRETERS.test(name);
}

/** The option (as written) that hands each interpreter its program on the command line. */
const INLINE_OPTION: [RegExp, RegExp][] = [
  [/^(python|pypy)/, /^-[a-zA-Z]*c/],
  [/^perl/, /^-[a-zA-Z0-9]*[eE]/],
  [/^ruby/, /^-[a-zA-Z]*e/],
  [/^(node|nodejs|bun)$/, /^(-[ep]|-pe|-ep|--eval|--print)(=|$)/],
  [/^php/, /^-[rBRE]/],
  [/^(lua|luajit|rscript|r|osascript|groovy)/, /^-e/],
  [/^julia$/, /^(-[eE]|--eval|--print)(=|$)/],
  [/^(pwsh|powershell)$/, /^-(c|command|e|ec|encodedcommand)$/i],
  [/^expect$/, /^-c$/],
];

/** Options after which an interpreter runs a module or reads no program from its operands (`python -m`). */
const MODULE_OPTION = /^(-m|-[a-zA-Z]*m)$/;

/** awk calls out to the shell with `system(…)` or by piping to or from a command string. */
const AWK_RUNS = /\bsystem\s*\(|\|\s*&?\s*"|"\s*\|&?\s*getline|\|&/;

/**
 * True when an interpreter (not a shell: a shell's `-c` string is parsed as shell) is given its program
 * on the command line (`python3 -c`, `perl -pe`, `node -e`, `deno eval`, `awk 'BEGIN{system(…)}'`).
 */
export function hasInlineCode(view: CommandView): boolean {
  const { name, args } = view;
  if (/^(g|m|n|busybox-)?awk$/.test(name)) {
    if (args.some((a) => a === "-f" || a.startsWith("--file"))) return false;
    const program = operandsOf(args.filter((_a, k) => !/^-[vF]$/.test(args[k - 1] ?? "")))[0];
    return program !== undefined && AWK_RUNS.test(program);
  }
  if (name === "deno") return operandsOf(args)[0] === "eval";
  const option = INLINE_OPTION.find(([names]) => names.test(name))?.[1];
  if (!option) return false;
  for (const a of args) {
    if (a === "--" || !a.startsWith("-") || a === "-") return false;
    if (MODULE_OPTION.test(a) && /^(python|pypy)/.test(name)) return false;
    if (option.test(a)) return true;
  }
  return false;
}

/** True when a shell or interpreter reads its program from stdin: no script operand, `-`, or `sh -s`. */
export function readsProgramFromStdin(view: CommandView): boolean {
  const opts = optionsOf(view.args);
  if (opts.some((o) => /^-[a-zA-Z]*[cemE]/.test(o) && !/^-[a-zA-Z]*s/.test(o))) return false;
  if (hasInlineCode(view)) return false;
  if (opts.some((o) => /^-[a-zA-Z]*s[a-zA-Z]*$/.test(o))) return true;
  const first = operandsOf(view.args)[0];
  return first === undefined || first === "-";
}

/**
 * The script file a shell or interpreter runs (`bash x.sh`, `python3 tool.py`), or undefined when it
 * runs inline code, a module or stdin.
 */
export function scriptOperand(view: CommandView): Word | undefined {
  if (!runsCode(view.name) || hasInlineCode(view)) return undefined;
  if (SHELLS.has(view.name) && view.args.some((a) => /^-[a-zA-Z]*c/.test(a))) return undefined;
  for (const [k, a] of view.args.entries()) {
    if (MODULE_OPTION.test(a) && /^(python|pypy)/.test(view.name)) return undefined;
    if (a === "--") return view.words[k + 1];
    if (a.startsWith("-") && a !== "-") continue;
    return a === "-" ? undefined : view.words[k];
  }
  return undefined;
}
