/**
 * Turns parsed commands into the views the rules test: the command as written, then each command it
 * wraps (`sudo`, `env`, `nice`, `xargs`, `timeout`, …), with the command word reduced to its base name
 * (`/bin/rm` → `rm`). Strings a command runs as shell code (`sh -c`, `eval`, `su -c`, `env -S`, `watch`,
 * `find -exec`) and every substitution are returned as nested scripts, checked like the top level.
 */
import { posix } from "node:path";
import {
  parseShell,
  type Redirect,
  type Script,
  ShellParseError,
  type SimpleCommand,
  type Word,
} from "./shell-parse.js";

/** One way of reading a simple command: its command name and the words after it. */
export interface CommandView {
  /** Base name of the command word, lowercased: `/usr/bin/SUDO` → `sudo`. */
  name: string;
  /** The words after the command word, as text. */
  args: string[];
  /** The same words with their substitutions. */
  words: Word[];
  /** Redirections of the simple command (shared by the wrappers and what they wrap). */
  redirects: Redirect[];
  /** Every view of the commands before this one in its pipeline (what feeds its stdin). */
  upstream: CommandView[];
  /**
   * Where an earlier `cd` of the same command line moved: an absolute path, a path relative to the
   * starting directory, or `?` when unknowable (`cd`, `cd ~`, `cd $X`). Undefined: no `cd` before.
   */
  cwd?: string;
}

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
  xargs: {
    withArg: [
      "-a",
      "-d",
      "-E",
      "-I",
      "-L",
      "-n",
      "-P",
      "-s",
      "--arg-file",
      "--delimiter",
      "--max-args",
      "--max-procs",
    ],
  },
};

/** Shells whose `-c` string is shell code. */
export const SHELLS = new Set([
  "sh",
  "bash",
  "zsh",
  "dash",
  "ksh",
  "mksh",
  "ash",
  "fish",
  "csh",
  "tcsh",
  "busybox",
]);

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

function textScript(text: string): Script {
  return parseShell(text);
}

/** Shell code a command runs from its arguments (`bash -c CODE`, `eval ARGS`, `find -exec CMD ;`). */
function codeInArgs(name: string, args: Word[]): Script[] {
  const texts = args.map((w) => w.text);
  if (SHELLS.has(name)) {
    let sawC = false;
    for (const t of texts) {
      if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(t)) sawC = true;
      else if (/^[-+]/.test(t) && t !== "-") continue;
      else return sawC ? [textScript(t)] : [];
    }
    return [];
  }
  if (name === "eval") return [textScript(texts.join(" "))];
  if (name === "su" || name === "runuser") {
    const k = texts.findIndex((t) => t === "-c" || t === "--command");
    const attached = texts.find((t) => t.startsWith("--command="));
    if (attached) return [textScript(attached.slice("--command=".length))];
    const code = k >= 0 ? texts[k + 1] : undefined;
    return code === undefined ? [] : [textScript(code)];
  }
  if (name === "env") {
    const k = texts.findIndex((t) => t === "-S" || t === "--split-string");
    const attached = texts.find((t) => t.startsWith("--split-string="));
    if (attached) return [textScript(attached.slice("--split-string=".length))];
    const code = k >= 0 ? texts.slice(k + 1).join(" ") : undefined;
    return code === undefined ? [] : [textScript(code)];
  }
  if (name === "watch") {
    let k = 0;
    while (k < texts.length && texts[k]?.startsWith("-"))
      k += /^-(n|d|-interval)$/.test(texts[k] ?? "") ? 2 : 1;
    return k < texts.length ? [textScript(texts.slice(k).join(" "))] : [];
  }
  if (name === "find") return findExec(args);
  return [];
}

/** `find START… -exec CMD {} ;` → CMD with `{}` read as START/{} (so `find / -exec rm` deletes under `/`). */
function findExec(args: Word[]): Script[] {
  const starts: string[] = [];
  for (const w of args) {
    if (w.text.startsWith("-") || w.text === "(" || w.text === "!") break;
    starts.push(w.text);
  }
  const start = starts[0] ?? ".";
  const scripts: Script[] = [];
  for (let k = 0; k < args.length; k++) {
    if (!/^-(exec|execdir|ok|okdir)$/.test(args[k]?.text ?? "")) continue;
    const words: Word[] = [];
    for (k++; k < args.length && args[k]?.text !== ";" && args[k]?.text !== "+"; k++) {
      const w = args[k] as Word;
      words.push(
        w.text.includes("{}") ? { ...w, text: w.text.replace("{}", `${start.replace(/\/$/, "")}/{}`) } : w,
      );
    }
    const cmd: SimpleCommand = { words, redirects: [] };
    if (words.length > 0) scripts.push({ pipelines: [[cmd]] });
  }
  return scripts;
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
  let words: Word[] | undefined = stripLeading(cmd.words);
  for (let guard = 0; words && words.length > 0 && guard < 16; guard++) {
    const [first, ...rest] = words as [Word, ...Word[]];
    const view: CommandView = {
      name: commandName(first.text),
      args: rest.map((w) => w.text),
      words: rest,
      redirects: cmd.redirects,
      upstream,
      ...(cwd !== undefined ? { cwd } : {}),
    };
    views.push(view);
    nested.push(...codeInArgs(view.name, rest));
    words = unwrap(view.name, rest);
    if (words) words = stripLeading(words);
  }
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
 * @throws ShellParseError past 16 levels of nested code
 */
export function allViews(
  script: Script,
  out: CommandView[] = [],
  depth = 0,
  state: { cwd?: string } = {},
): CommandView[] {
  if (depth > 16) throw new ShellParseError("command nested too deeply to check");
  for (const pipeline of script.pipelines) {
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
