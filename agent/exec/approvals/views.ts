/**
 * Turns parsed commands into the views the rules test: the command as written, then each command it
 * wraps (`sudo`, `env`, `nice`, `xargs`, `timeout`, …), with the command word reduced to its base name
 * (`/bin/rm` → `rm`) and unquoted brace lists expanded. What `xargs` adds from its input is one word
 * the rules read as unknown (`FROM_INPUT`). Strings a command runs as shell code (`sh -c`, `eval`,
 * `su -c`, `env -S`, `watch`, `trap`, `find -exec`, `parallel`) and every substitution are returned as
 * nested scripts, checked like the top level.
 */
import { posix } from "node:path";
import { expandBraces } from "./braces.js";
import { codeInArgs, codeOnStdin, fromInput } from "./nested-code.js";
import { type Script, ShellParseError, type SimpleCommand, type Word } from "./shell-parse.js";
import type { CommandView } from "./types.js";

interface WrapperSpec {
  /** Options that take the next word as their value. */
  withArg?: string[];
  /** Options after which nothing is run (`command -v`). */
  stopAt?: string[];
  /** Positional words between the options and the wrapped command (`timeout 5 cmd`). */
  positional?: number;
  /** `NAME=value` words are skipped (`env`). */
  assignments?: boolean;
}

const WRAPPERS: Record<string, WrapperSpec> = {
  sudo: {
    withArg: [
      "-u",
      "-g",
      "-h",
      "-p",
      "-C",
      "-D",
      "-r",
      "-t",
      "-U",
      "-T",
      "-R",
      "--user",
      "--group",
      "--host",
    ],
    stopAt: ["-l", "--list", "-v", "--validate", "-k", "-K", "-e", "--edit"],
  },
  doas: { withArg: ["-u", "-C"] },
  pkexec: { withArg: ["--user"] },
  env: { withArg: ["-u", "--unset", "-C", "--chdir"], assignments: true },
  command: { stopAt: ["-v", "-V"] },
  builtin: {},
  exec: { withArg: ["-a"] },
  nohup: {},
  time: {},
  unbuffer: {},
  busybox: {},
  nice: { withArg: ["-n", "--adjustment"] },
  ionice: { withArg: ["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"] },
  chrt: { positional: 1 },
  taskset: { positional: 1 },
  timeout: { withArg: ["-s", "-k", "--signal", "--kill-after"], positional: 1 },
  stdbuf: { withArg: ["-i", "-o", "-e"] },
  flock: { withArg: ["-w", "-E", "--timeout", "--conflict-exit-code"], positional: 1 },
  strace: { withArg: ["-e", "-o", "-p", "-s", "-u", "-P"] },
};

const MAX_PIPELINE = 500;
const MAX_VIEWS = 50_000;

const RESERVED = new Set([
  "{",
  "}",
  "!",
  "if",
  "then",
  "else",
  "elif",
  "fi",
  "do",
  "done",
  "while",
  "until",
  "time",
  "coproc",
]);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;

/** `/usr/bin/rm` → `rm`; lowercased so case-insensitive file systems do not hide a name. */
export function commandName(word: string): string {
  return word.slice(word.lastIndexOf("/") + 1).toLowerCase();
}

function stripLeading(words: Word[]): Word[] {
  let k = 0;
  while (k < words.length && (RESERVED.has(words[k]?.text ?? "") || ASSIGNMENT.test(words[k]?.text ?? "")))
    k++;
  return words.slice(k);
}

/** Unquoted brace lists expanded into the words they become (`{rm,-rf,/x}` → `rm -rf /x`). */
function expandWords(words: Word[]): Word[] {
  if (!words.some((w) => w.brace)) return words;
  return words.flatMap((w) => {
    const texts = w.brace ? expandBraces(w.text) : undefined;
    return texts ? texts.map((text) => ({ ...w, text })) : [w];
  });
}

/** The assignments in front of a command (`PATH=./bin ls`, or a line of assignments alone). */
function leadingAssignments(words: Word[]): string[] {
  const out: string[] = [];
  for (const w of words) {
    if (RESERVED.has(w.text)) continue;
    if (!ASSIGNMENT.test(w.text)) break;
    out.push(w.text);
  }
  return out;
}

/** The words a wrapper runs, or undefined when it runs nothing. */
function unwrap(name: string, words: Word[]): Word[] | undefined {
  const spec = WRAPPERS[name];
  if (!spec) return undefined;
  let k = 0;
  while (k < words.length) {
    const text = words[k]?.text ?? "";
    if (text === "--") {
      k++;
      break;
    }
    if (spec.stopAt?.includes(text)) return undefined;
    if (spec.assignments && ASSIGNMENT.test(text)) k++;
    else if (text.startsWith("-") && text.length > 1) k += spec.withArg?.includes(text) ? 2 : 1;
    else break;
  }
  k += spec.positional ?? 0;
  return k < words.length ? words.slice(k) : undefined;
}

/**
 * Every view of one simple command, and the scripts nested in it.
 * @param upstream the views of the commands before it in its pipeline
 * @param cwd where an earlier `cd` moved (see `CommandView.cwd`)
 * @throws ShellParseError from nested code too deep to parse
 */
export function viewsOf(
  cmd: SimpleCommand,
  upstream: CommandView[],
  cwd?: string,
): { views: CommandView[]; nested: Script[] } {
  const views: CommandView[] = [];
  const nested: Script[] = [];
  for (const w of cmd.words) nested.push(...w.subs);
  for (const r of cmd.redirects) nested.push(...r.target.subs);
  // A `case` pattern is matched, not run; only its substitutions run.
  if (cmd.pattern) return { views, nested };
  const assignments = leadingAssignments(cmd.words);
  const shared = {
    redirects: cmd.redirects,
    upstream,
    ...(cwd !== undefined ? { cwd } : {}),
  };
  let words: Word[] | undefined = stripLeading(expandWords(cmd.words));
  for (let guard = 0; words && words.length > 0 && guard < 16; guard++) {
    const [first, ...rest] = words as [Word, ...Word[]];
    const view: CommandView = {
      name: commandName(first.text),
      command: first,
      args: rest.map((w) => w.text),
      words: rest,
      ...shared,
      ...(guard === 0 && assignments.length > 0 ? { assignments } : {}),
    };
    views.push(view);
    nested.push(...codeInArgs(view.name, rest), ...codeOnStdin(view));
    words = view.name === "xargs" ? fromInput(rest) : unwrap(view.name, rest);
    if (words) words = stripLeading(words);
  }
  // `> /etc/passwd` or `PATH=.:$PATH` alone still acts: a view with no command name keeps them.
  if (views.length === 0 && (cmd.redirects.length > 0 || assignments.length > 0))
    views.push({
      name: "",
      command: { text: "", subs: [] },
      args: [],
      words: [],
      ...shared,
      ...(assignments.length > 0 ? { assignments } : {}),
    });
  return { views, nested };
}

/** The directory after `cd TARGET` from `cwd` (see `CommandView.cwd`). */
function changeDirectory(cwd: string | undefined, args: string[]): string {
  const target = args.find((a) => !a.startsWith("-") || a === "-");
  if (target === undefined || target === "-" || /^[~$`]/.test(target)) return "?";
  if (target.startsWith("/")) return posix.normalize(target);
  if (cwd === "?") return "?";
  return posix.join(cwd ?? ".", target);
}

/**
 * Views of every command in a script and, recursively, in the code nested in it, in order. A `cd` or
 * `pushd` changes the `cwd` of the views after it (subshells are not told apart: erring towards asking).
 * @throws ShellParseError past 16 levels of nested code, 500 commands in a pipeline or 50,000 commands
 */
export function allViews(
  script: Script,
  out: CommandView[] = [],
  depth = 0,
  state: { cwd?: string } = {},
): CommandView[] {
  if (depth > 16) throw new ShellParseError("command nested too deeply to check");
  for (const pipeline of script.pipelines) {
    // Each command gets a copy of what feeds it: bound the quadratic cost, failing closed.
    if (pipeline.length > MAX_PIPELINE) throw new ShellParseError("pipeline too long to check");
    if (out.length > MAX_VIEWS) throw new ShellParseError("command line too long to check");
    const upstream: CommandView[] = [];
    for (const cmd of pipeline) {
      const { views, nested } = viewsOf(cmd, [...upstream], state.cwd);
      out.push(...views);
      upstream.push(...views);
      for (const sub of nested) allViews(sub, out, depth + 1, state);
      const cd = views.find((v) => v.name === "cd" || v.name === "pushd");
      if (cd) state.cwd = changeDirectory(state.cwd, cd.args);
    }
  }
  return out;
}
