/**
 * Rules for what the classifier cannot read. The other rules judge what a command line says; these
 * catch lines whose meaning is only known when they run: a command name from a variable, code built
 * at run time, code handed to an interpreter, a program fed through a pipe, a script the line wrote
 * itself, arguments read from input. Unknown shape → ask.
 */
import { posix } from "node:path";
import { operandsOf, writeTargets } from "./args.js";
import {
  hasInlineCode,
  INTERPRETERS,
  readsProgramFromStdin,
  runsCode,
  scriptOperand,
} from "./interpreters.js";
import { codeWords, FROM_INPUT, stdinCode } from "./nested-code.js";
import { fromCwd } from "./paths.js";
import type { Word } from "./shell-parse.js";
import type { CommandView, DangerRule } from "./types.js";

/** A word whose value is only known at run time: an expansion, a substitution, a pattern, input. */
export function unreadable(word: Word): boolean {
  return (
    word.expands === true ||
    word.subs.length > 0 ||
    word.text.includes(FROM_INPUT) ||
    (word.glob === true && /[*?]|\[.+\]/.test(word.text))
  );
}

/** Paths that read the command's own stdin or another process's output (`source /dev/stdin`). */
const STREAM_PATH = /^(-|\/dev\/(stdin|fd\/.*)|\/proc\/self\/fd\/.*)$/;

function unseen(word: Word | undefined): boolean {
  return word !== undefined && (unreadable(word) || STREAM_PATH.test(word.text));
}

function codeFromExpansion(view: CommandView): boolean {
  const strings = codeWords(view.name, view.words);
  if (strings.some((words) => words.some((w) => w.expands || w.subs.length > 0))) return true;
  return stdinCode(view).some((code) => !code.literal);
}

function interpreterCode(view: CommandView): boolean {
  if (hasInlineCode(view)) return true;
  if (!INTERPRETERS.test(view.name) || !readsProgramFromStdin(view)) return false;
  return view.redirects.some((r) => r.op === "<<<" || r.body !== undefined);
}

const STDIN_REDIRECTS = new Set(["<", "<<", "<<-", "<<<", "<>"]);

function programFromPipe(view: CommandView): boolean {
  return (
    runsCode(view.name) &&
    readsProgramFromStdin(view) &&
    view.upstream.length > 0 &&
    !view.redirects.some((r) => STDIN_REDIRECTS.has(r.op))
  );
}

function unseenScript(view: CommandView): boolean {
  if (view.name === "source" || view.name === ".") {
    const k = view.args.findIndex((a) => !a.startsWith("-") || a === "-");
    return k < 0 || unseen(view.words[k]);
  }
  return unseen(scriptOperand(view));
}

/** Commands that delete, move, overwrite or change files, or signal processes, by their arguments. */
const CHANGES_BY_ARGS =
  /^(rm|rmdir|unlink|shred|mv|cp|dd|truncate|chmod|chown|chgrp|chattr|ln|install|rsync|tee|sed|kill|pkill|killall)$/;

function argsFromInput(view: CommandView): boolean {
  return view.args.includes(FROM_INPUT) && (CHANGES_BY_ARGS.test(view.name) || runsCode(view.name));
}

/** Variables whose value makes later commands run other code (a search path, a startup file, a preload). */
const CODE_VARIABLES = /^(BASH_ENV|ENV|LD_PRELOAD|LD_AUDIT|PROMPT_COMMAND)\+?=/;

/** `PATH=…` that puts a relative or empty directory (the working directory) on the search path. */
function relativePath(assignment: string): boolean {
  const m = /^PATH\+?=(.*)$/s.exec(assignment);
  if (!m) return false;
  return (m[1] ?? "").split(":").some((dir) => dir === "" || !/^[/$~]/.test(dir));
}

function redefines(view: CommandView): boolean {
  const { name, args } = view;
  if (name === "alias") return args.some((a) => a.includes("="));
  if (name === "hash") return args.some((a) => /^-[a-zA-Z]*p/.test(a));
  if (name === "enable") return args.some((a) => /^-[a-zA-Z]*f/.test(a));
  const declared = /^(export|declare|typeset|readonly|local)$/.test(name) ? args : [];
  return [...(view.assignments ?? []), ...declared].some((a) => CODE_VARIABLES.test(a) || relativePath(a));
}

/** Files a download writes: `curl -o F`, `curl -O URL` and `wget URL` (its base name), `wget -O F`. */
function downloads(view: CommandView): string[] {
  const { name, args } = view;
  if (name !== "curl" && name !== "wget") return [];
  const out: string[] = [];
  const baseOf = (url: string) => posix.basename(url.split(/[?#]/)[0] ?? "");
  for (const [k, a] of args.entries()) {
    const next = args[k + 1];
    if (name === "curl" && (a === "-o" || a === "--output") && next) out.push(next);
    else if (name === "curl" && /^-o./.test(a)) out.push(a.slice(2));
    else if (name === "wget" && (a === "-O" || a === "--output-document") && next) out.push(next);
    else if (name === "wget" && a.startsWith("--output-document=")) out.push(a.slice(18));
  }
  const urls = operandsOf(args).filter((a) => /^[a-z]+:\/\//i.test(a));
  if (name === "wget" && out.length === 0) out.push(...urls.map(baseOf));
  if (name === "curl" && args.some((a) => a === "-O" || a === "--remote-name" || /^-[a-zA-Z]*O$/.test(a)))
    out.push(...urls.map(baseOf));
  return out;
}

/** Paths a view runs as a program or script: `./x`, `sh x`, `python3 x.py`, `source x`, `bash < x`. */
function runs(view: CommandView): string[] {
  const out: string[] = [];
  if (view.name !== "" && view.command.text.includes("/")) out.push(view.command.text);
  const script = scriptOperand(view);
  if (script) out.push(script.text);
  if (view.name === "source" || view.name === ".") {
    const first = view.args.find((a) => !a.startsWith("-"));
    if (first) out.push(first);
  }
  if (runsCode(view.name) && readsProgramFromStdin(view))
    for (const r of view.redirects) if (r.op === "<") out.push(r.target.text);
  return out;
}

function writtenThenRun(views: readonly CommandView[]): boolean {
  const at = (path: string, cwd?: string) => posix.normalize(fromCwd(path, cwd));
  const written = new Set<string>();
  for (const view of views) {
    if (runs(view).some((p) => written.has(at(p, view.cwd)))) return true;
    for (const p of [...writeTargets(view), ...downloads(view)]) written.add(at(p, view.cwd));
  }
  return false;
}

/** The rules for what cannot be read, in the order they are tried. */
export const OPAQUE_RULES: readonly DangerRule[] = [
  {
    id: "code-from-expansion",
    description:
      'runs shell code built when it runs (eval "$x", bash -c "$(…)", a here-document with $… fed to a shell): the code cannot be read before',
    match: codeFromExpansion,
  },
  {
    id: "command-from-expansion",
    description:
      "runs a command whose name comes from a variable, a substitution or a file pattern ($x …, $(echo rm) …, /bin/r? …): what runs is only known when it runs",
    match: (view) => view.name !== "" && unreadable(view.command),
  },
  {
    id: "interpreter-inline-code",
    description:
      "hands an interpreter code on the command line or in a here-document (python -c, perl -e, node -e, ruby -e, php -r, awk system()): it cannot be checked like a shell command",
    match: interpreterCode,
  },
  {
    id: "program-from-pipe",
    description:
      "feeds a shell or interpreter its program through a pipe (… | base64 -d | sh, xxd -r | bash, cat x | python3): what runs cannot be read",
    match: programFromPipe,
  },
  {
    id: "unseen-script",
    description:
      "runs or sources a script it cannot see: a path from a variable, a substitution or a stream (source $f, bash <(…), sh /dev/stdin)",
    match: unseenScript,
  },
  {
    id: "args-from-input",
    description:
      "deletes, moves, overwrites or runs whatever its input names (… | xargs rm, parallel rm, find / -exec rm {} ;): the targets cannot be read",
    match: argsFromInput,
  },
  {
    id: "command-redefined",
    description:
      "changes what later commands run (alias, hash -p, a relative directory on PATH, BASH_ENV, LD_PRELOAD)",
    match: redefines,
  },
  {
    id: "script-written-then-run",
    description:
      "writes a file and runs it in the same command line (echo … > x.sh; sh x.sh, chmod +x x && ./x): its content was not checked",
    matchViews: writtenThenRun,
  },
];
