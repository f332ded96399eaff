/**
 * Completion in the input: `/` at the start offers the gateway's commands (and the UI's own), `@`
 * after a space offers files and folders under the directory `herald chat` was started in (never
 * above it; `.git` and `node_modules` left out). Both complete the word the cursor ends.
 */
import { readdirSync } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import type { CommandMenuEntry } from "../../../core/types.js";

/** One offer: what it shows, a hint beside it, and the text that replaces the word. */
export interface Completion {
  label: string;
  hint?: string | undefined;
  /** The replacement of `text.slice(from, cursor)`. */
  insert: string;
}

/** What completing the word at the cursor offers, and where the word starts. */
export interface CompletionSet {
  from: number;
  items: Completion[];
}

/** Commands the UI itself answers (not sent to the gateway). */
export const LOCAL_COMMANDS: CommandMenuEntry[] = [
  { name: "exit", description: "leave (Ctrl+D on an empty line does too)" },
];

const MAX_ITEMS = 50;
const SKIPPED = new Set([".git", "node_modules"]);

/** The completions of the word ending at `cursor`, or undefined when it is neither `/…` nor `@…`. */
export function complete(
  text: string,
  cursor: number,
  commands: readonly CommandMenuEntry[],
  root: string,
): CompletionSet | undefined {
  const head = text.slice(0, cursor);
  const slash = /^\/(\S*)$/.exec(head);
  if (slash && !text.slice(cursor).trim()) return commandsFor(slash[1]!.toLowerCase(), commands);
  const at = /(^|\s)@(\S*)$/.exec(head);
  if (at) return filesFor(at[2]!, cursor - at[2]!.length - 1, root);
  return undefined;
}

function commandsFor(typed: string, commands: readonly CommandMenuEntry[]): CompletionSet {
  const all = [...commands, ...LOCAL_COMMANDS.filter((l) => !commands.some((c) => c.name === l.name))];
  const starts = all.filter((c) => c.name.toLowerCase().startsWith(typed));
  const contains = typed
    ? all.filter((c) => !starts.includes(c) && c.name.toLowerCase().includes(typed))
    : [];
  const items = [...starts.sort((a, b) => a.name.localeCompare(b.name)), ...contains]
    .slice(0, MAX_ITEMS)
    .map((c) => ({ label: `/${c.name}`, hint: c.description, insert: `/${c.name} ` }));
  return { from: 0, items };
}

/** Entries of the folder `typed` names (relative to `root`) whose names start with its last part. */
function filesFor(typed: string, from: number, root: string): CompletionSet | undefined {
  const slash = typed.lastIndexOf("/");
  const folder = typed.slice(0, slash + 1);
  const prefix = typed.slice(slash + 1);
  const dir = folder ? insideRoot(root, folder) : root;
  if (!dir) return undefined;
  let names: { name: string; dir: boolean }[];
  try {
    names = readdirSync(dir, { withFileTypes: true }).map((d) => ({ name: d.name, dir: d.isDirectory() }));
  } catch {
    return { from, items: [] };
  }
  const items = names
    .filter((n) => !SKIPPED.has(n.name) && n.name.startsWith(prefix))
    .filter((n) => prefix.startsWith(".") || !n.name.startsWith("."))
    .sort((a, b) => Number(b.dir) - Number(a.dir) || a.name.localeCompare(b.name))
    .slice(0, MAX_ITEMS)
    .map((n) => {
      const path = folder + n.name + (n.dir ? "/" : "");
      return { label: path, hint: n.dir ? "folder" : undefined, insert: `@${path}${n.dir ? "" : " "}` };
    });
  return { from, items };
}

/** The absolute path `path` names under `root`, or undefined when it is `root` itself or outside. */
export function insideRoot(root: string, path: string): string | undefined {
  const rel = relative(root, resolve(root, path));
  if (!rel || rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return undefined;
  return join(root, rel);
}
