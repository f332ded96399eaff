/**
 * Shell code hidden in a command's arguments or stdin: `sh -c CODE`, `eval ARGS`, `su -c CODE`,
 * `env -S CODE`, `watch CMD`, `trap CODE SIG`, `find -exec CMD ;`, `parallel CMD`, and here-documents
 * fed to a shell; and the arguments `xargs` and `parallel` take from their input.
 */
import { parseShell, type Script, type SimpleCommand, type Word } from "./shell-parse.js";
import type { CommandView } from "./types.js";

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

/**
 * The word that stands for arguments a command gets from its input at run time (`… | xargs rm`,
 * `find / -exec rm {} ;`). It starts with `$`, so the path rules read it as unknown.
 */
export const FROM_INPUT = "$\u0000input";

const INPUT_WORD: Word = { text: FROM_INPUT, subs: [], expands: true, splits: true };

const XARGS_WITH_ARG = new Set([
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
]);

/**
 * The command `xargs` runs, with what it reads from its input as `FROM_INPUT`: in place of the
 * replace string (`-I {}`, `-i`) or after the last word. Undefined when it names no command.
 */
export function fromInput(args: Word[]): Word[] | undefined {
  let replace: string | undefined;
  let k = 0;
  while (k < args.length) {
    const text = args[k]?.text ?? "";
    if (text === "--") {
      k++;
      break;
    }
    if (!text.startsWith("-") || text.length === 1) break;
    if (text === "-I") replace = args[k + 1]?.text;
    else if (text.startsWith("-I")) replace = text.slice(2);
    else if (text === "-i" || text === "--replace") replace = "{}";
    else if (text.startsWith("--replace=")) replace = text.slice("--replace=".length);
    k += XARGS_WITH_ARG.has(text) ? 2 : 1;
  }
  const words = args.slice(k);
  if (words.length === 0) return undefined;
  if (replace === undefined || replace === "") return [...words, INPUT_WORD];
  const mark = replace;
  return words.map((w) => (w.text.includes(mark) ? { ...INPUT_WORD, text: FROM_INPUT } : w));
}

/**
 * The words of each string a command runs as shell code: `bash -c CODE`, `eval ARGS`, `su -c CODE`,
 * `env -S CODE`, `watch CMD`, `trap CODE SIG…`. Each entry is one string, split in words as written.
 */
export function codeWords(name: string, args: Word[]): Word[][] {
  const texts = args.map((w) => w.text);
  if (SHELLS.has(name)) {
    let sawC = false;
    for (const [k, t] of texts.entries()) {
      if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(t)) sawC = true;
      else if (/^[-+]/.test(t) && t !== "-") continue;
      else return sawC ? [[args[k] as Word]] : [];
    }
    return [];
  }
  if (name === "eval") return args.length > 0 ? [args] : [];
  if (name === "su" || name === "runuser") {
    const attached = args.find((w) => w.text.startsWith("--command="));
    if (attached) return [[{ ...attached, text: attached.text.slice("--command=".length) }]];
    const k = texts.findIndex((t) => t === "-c" || t === "--command");
    const code = k >= 0 ? args[k + 1] : undefined;
    return code === undefined ? [] : [[code]];
  }
  if (name === "env") {
    const attached = args.find((w) => w.text.startsWith("--split-string="));
    if (attached) return [[{ ...attached, text: attached.text.slice("--split-string=".length) }]];
    const k = texts.findIndex((t) => t === "-S" || t === "--split-string");
    return k >= 0 && k + 1 < args.length ? [args.slice(k + 1)] : [];
  }
  if (name === "watch") {
    let k = 0;
    while (k < texts.length && texts[k]?.startsWith("-"))
      k += /^-(n|d|-interval)$/.test(texts[k] ?? "") ? 2 : 1;
    return k < texts.length ? [args.slice(k)] : [];
  }
  if (name === "trap") {
    const code = args.find((w) => !w.text.startsWith("-"));
    return code && !/^(-|[0-9]+|[A-Z]+)$/.test(code.text) ? [[code]] : [];
  }
  return [];
}

function joined(words: Word[]): string {
  return words.map((w) => w.text).join(" ");
}

/** Shell code a command runs from its arguments (see `codeWords`, plus `find -exec` and `parallel`). */
export function codeInArgs(name: string, args: Word[]): Script[] {
  if (name === "find") return findExec(args);
  if (name === "parallel") return parallelCommand(args);
  return codeWords(name, args).map((words) => parseShell(joined(words)));
}

/** The here-documents and here-strings fed to a shell as its program. */
export function stdinCode(view: CommandView): { text: string; literal: boolean }[] {
  if (!SHELLS.has(view.name) || view.args.some((a) => /^-[a-zA-Z]*c/.test(a))) return [];
  return view.redirects.flatMap((r) => {
    if (r.op === "<<<") return [{ text: r.target.text, literal: !r.target.expands }];
    if (r.body === undefined) return [];
    // An unquoted delimiter lets the shell expand the body before the program reads it.
    return [{ text: r.body, literal: r.target.quoted === true || !/\$[\w{(@*#?!$-]|`/.test(r.body) }];
  });
}

/** A shell fed a here-document or here-string runs it: `bash <<EOF … EOF`, `sh <<< "rm -rf /"`. */
export function codeOnStdin(view: CommandView): Script[] {
  return stdinCode(view).map((code) => parseShell(code.text));
}

/**
 * `find START… -exec CMD {} ;` → CMD with `{}` read as START/{} (so `find / -exec rm` deletes under `/`);
 * from a start outside the working directory (absolute, `~`, `..`, a variable) `{}` is `FROM_INPUT`.
 */
function findExec(args: Word[]): Script[] {
  const starts: string[] = [];
  for (const w of args) {
    if (w.text.startsWith("-") || w.text === "(" || w.text === "!") break;
    starts.push(w.text);
  }
  const start = starts[0] ?? ".";
  const outside = starts.some((s) => /^[/~$`]/.test(s) || s === ".." || s.startsWith("../"));
  const scripts: Script[] = [];
  for (let k = 0; k < args.length; k++) {
    if (!/^-(exec|execdir|ok|okdir)$/.test(args[k]?.text ?? "")) continue;
    const words: Word[] = [];
    for (k++; k < args.length && args[k]?.text !== ";" && args[k]?.text !== "+"; k++) {
      const w = args[k] as Word;
      if (!w.text.includes("{}")) words.push(w);
      else if (outside) words.push(INPUT_WORD);
      else words.push({ ...w, text: w.text.replace("{}", `${start.replace(/\/$/, "")}/{}`) });
    }
    const cmd: SimpleCommand = { words, redirects: [] };
    if (words.length > 0) scripts.push({ pipelines: [[cmd]] });
  }
  return scripts;
}

const PARALLEL_WITH_ARG =
  /^(-[jSnNLIaEd]|--(jobs|sshlogin|max-args|max-lines|arg-file|colsep|delimiter|joblog|results|tmpdir|timeout|retries|delay|halt|memfree|load|workdir|env|basefile|return|transfer-file|eof|replace|tagstring|sshloginfile))$/;

/**
 * GNU `parallel CMD ::: ARGS` (or CMD with arguments from its input) runs CMD through a shell, with
 * `{}`, `{.}`, `{/}`, `{1}`… replaced by each argument: CMD parsed with those as `FROM_INPUT`.
 */
function parallelCommand(args: Word[]): Script[] {
  let k = 0;
  while (k < args.length && args[k]?.text.startsWith("-"))
    k += PARALLEL_WITH_ARG.test(args[k]?.text ?? "") ? 2 : 1;
  const end = args.findIndex((w, i) => i >= k && /^:::+\+?$|^::::\+?$/.test(w.text));
  const words = args.slice(k, end < 0 ? args.length : end);
  if (words.length === 0) return [];
  const text = joined(words);
  const replaced = text.replace(/\{[0-9]*[./#%]*[./]?\}/g, FROM_INPUT);
  return [parseShell(replaced === text ? `${text} ${FROM_INPUT}` : replaced)];
}
