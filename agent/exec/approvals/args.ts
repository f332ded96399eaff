/** Argument helpers the rules share: options, operands and the files a command writes. */
import type { CommandView } from "./types.js";

/** Words before `--` that start with `-` (options and their clusters). */
export function optionsOf(args: string[]): string[] {
  const end = args.indexOf("--");
  return (end < 0 ? args : args.slice(0, end)).filter((a) => a.startsWith("-") && a.length > 1);
}

/** Words that are not options: everything after `--`, and words not starting with `-` before it. */
export function operandsOf(args: string[]): string[] {
  const end = args.indexOf("--");
  const before = (end < 0 ? args : args.slice(0, end)).filter((a) => !(a.startsWith("-") && a.length > 1));
  return end < 0 ? before : [...before, ...args.slice(end + 1)];
}

/** True when a short-option cluster (`-rf`) holds `letter`, or the long option is present. */
export function hasFlag(args: string[], letter: string, long?: string): boolean {
  return optionsOf(args).some(
    (o) =>
      (!o.startsWith("--") && /^-[a-zA-Z0-9]+$/.test(o) && o.includes(letter)) ||
      (long !== undefined && o === long),
  );
}

const WRITE_REDIRECTS = new Set([">", ">>", ">|", "&>", "&>>", "<>", ">&"]);

/** The destination of `cp`/`install`/`ln`/`rsync`: `-t DIR`, `--target-directory=DIR`, or the last operand. */
function destinationOf(args: string[]): string[] {
  const t = args.indexOf("-t");
  if (t >= 0 && args[t + 1]) return [args[t + 1] as string];
  const long = args.find((a) => a.startsWith("--target-directory="));
  if (long) return [long.slice("--target-directory=".length)];
  const ops = operandsOf(args);
  return ops.length >= 2 ? [ops[ops.length - 1] as string] : [];
}

/** Files `sed -i` edits in place: its operands, less the script when no `-e`/`-f` gave it. */
function sedInPlaceFiles(args: string[]): string[] {
  if (
    !optionsOf(args).some((o) => o.startsWith("-i") || o.startsWith("--in-place") || /^-[a-zA-Z]*i/.test(o))
  )
    return [];
  const rest: string[] = [];
  let scriptGiven = false;
  for (let k = 0; k < args.length; k++) {
    const a = args[k] as string;
    if (a === "-e" || a === "-f" || a === "--expression" || a === "--file") {
      scriptGiven = true;
      k++;
    } else if (!a.startsWith("-")) rest.push(a);
  }
  return scriptGiven ? rest : rest.slice(1);
}

/**
 * Paths a command writes, replaces or removes: output redirections, `tee` files, `dd of=`, the
 * destination of `cp`/`install`/`ln`/`rsync`, every operand of `mv`/`rm`/`unlink`/`rmdir`/`shred`/
 * `truncate`/`touch`, and the files of `sed -i`.
 */
export function writeTargets(view: CommandView): string[] {
  const out: string[] = [];
  for (const r of view.redirects) {
    if (!WRITE_REDIRECTS.has(r.op)) continue;
    if (r.op === ">&" && /^(\d+|-)$/.test(r.target.text)) continue;
    out.push(r.target.text);
  }
  const { name, args } = view;
  if (name === "tee") out.push(...operandsOf(args));
  else if (name === "dd") out.push(...args.filter((a) => a.startsWith("of=")).map((a) => a.slice(3)));
  else if (name === "cp" || name === "install" || name === "ln" || name === "rsync")
    out.push(...destinationOf(args));
  else if (["mv", "rm", "unlink", "rmdir", "shred", "truncate", "touch"].includes(name))
    out.push(...operandsOf(args));
  else if (name === "sed") out.push(...sedInPlaceFiles(args));
  return out;
}
