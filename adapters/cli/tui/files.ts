/**
 * `@path` in a message: a text file under the directory `herald chat` was started in goes with the
 * message, its content appended in a `<file path="…">` block, so the agent reads it wherever its turns
 * run (here or on a gateway elsewhere). At most 100 KB a file and 250 KB a message; binary files, links
 * out of that directory and paths that are not files stay as typed.
 */
import { closeSync, openSync, readSync, realpathSync, statSync } from "node:fs";
import { relative, sep } from "node:path";
import { insideRoot } from "./complete.js";

const FILE_MAX_BYTES = 100 * 1024;
const TOTAL_MAX_BYTES = 250 * 1024;

/** The message with its files appended, and what was attached (path and size) to show. */
export interface Attached {
  text: string;
  files: string[];
}

/** Appends the files `text` names with `@path`. Never throws: a file it cannot read stays a mention. */
export function attachFiles(text: string, root: string): Attached {
  const files: string[] = [];
  const blocks: string[] = [];
  let total = 0;
  let realRoot: string;
  try {
    realRoot = realpathSync(root);
  } catch {
    return { text, files };
  }
  const seen = new Set<string>();
  for (const match of text.matchAll(/(?:^|\s)@(\S+)/g)) {
    const path = match[1]!.replace(/[.,;:!?)]+$/, "");
    if (seen.has(path)) continue;
    seen.add(path);
    const content = readTextFile(realRoot, path, TOTAL_MAX_BYTES - total);
    if (content === undefined) continue;
    total += Buffer.byteLength(content);
    blocks.push(`<file path="${path}">\n${content}${content.endsWith("\n") ? "" : "\n"}</file>`);
    files.push(`${path} (${size(Buffer.byteLength(content))})`);
  }
  return blocks.length ? { text: `${text}\n\n${blocks.join("\n\n")}`, files } : { text, files };
}

/** The file's text when it is a text file inside `root` within `budget` bytes; otherwise undefined. */
function readTextFile(root: string, path: string, budget: number): string | undefined {
  const full = insideRoot(root, path);
  if (!full) return undefined;
  try {
    const real = realpathSync(full);
    const rel = relative(root, real);
    if (rel.startsWith(`..${sep}`) || rel === "..") return undefined;
    const stat = statSync(real);
    if (!stat.isFile() || stat.size > Math.min(FILE_MAX_BYTES, budget)) return undefined;
    const fd = openSync(real, "r");
    try {
      const bytes = Buffer.alloc(stat.size);
      const read = readSync(fd, bytes, 0, stat.size, 0);
      const data = bytes.subarray(0, read);
      if (data.includes(0)) return undefined;
      return data.toString("utf8");
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

function size(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KB`;
}
