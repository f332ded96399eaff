/**
 * Shell code hidden in a command's arguments or stdin: `sh -c CODE`, `eval ARGS`, `su -c CODE`,
 * `env -S CODE`, `watch CMD`, `find -exec CMD ;`, and here-documents fed to a shell.
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

function textScript(text: string): Script {
  return parseShell(text);
}

/** Shell code a command runs from its arguments (`bash -c CODE`, `eval ARGS`, `find -exec CMD ;`). */
export function codeInArgs(name: string, args: Word[]): Script[] {
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

/** A shell fed a here-document or here-string runs it: `bash <<EOF … EOF`, `sh <<< "rm -rf /"`. */
export function codeOnStdin(view: CommandView): Script[] {
  if (!SHELLS.has(view.name) || view.args.some((a) => /^-[a-zA-Z]*c/.test(a))) return [];
  return view.redirects.flatMap((r) => {
    if (r.op === "<<<") return [textScript(r.target.text)];
    return r.body !== undefined ? [textScript(r.body)] : [];
  });
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
