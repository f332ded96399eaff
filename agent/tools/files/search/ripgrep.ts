import { access, constants } from "node:fs/promises";
import { delimiter, join } from "node:path";
import { hitText, MAX_CONTENT_BYTES } from "./limits.js";
import type { SearchHit, SearchRequest } from "./types.js";

/**
 * Bytes of a matching line ripgrep prints (a longer one becomes a preview of this many bytes): at least
 * the 300 characters a hit shows, whatever their UTF-8 width. Its `--json` output has no such limit: a
 * match in a file of one 500 MB line was one 500 MB JSON line, plus an entry per match.
 */
const RG_MAX_COLUMNS = 1200;

let found: Promise<boolean> | undefined;

/** True when an executable `rg` is on this process's PATH (looked up once per process). */
export function hasRipgrep(): Promise<boolean> {
  found ??= (async () => {
    for (const dir of (process.env.PATH ?? "").split(delimiter)) {
      if (!dir) continue;
      try {
        await access(join(dir, "rg"), constants.X_OK);
        return true;
      } catch {
        // not in this directory
      }
    }
    return false;
  })();
  return found;
}

/**
 * ripgrep's arguments for `req`, run from the workspace root. It honours `.gitignore`, `.ignore` and
 * `.rgignore` even outside a git repository, skips hidden files, symlinks, binaries and `node_modules`,
 * and ignores the user's ripgrep config and global gitignore.
 */
export function ripgrepArgs(req: SearchRequest): string[] {
  const args = ["--no-config", "--no-require-git", "--no-ignore-global", "--glob", "!node_modules"];
  if (req.nameGlob) args.push("--type-add", `herald:${req.nameGlob}`, "--type", "herald");
  if (req.mode === "names") args.push("--files");
  else {
    args.push("--null", "--line-number", "--with-filename", "--no-heading", "--color", "never");
    args.push("--max-columns", String(RG_MAX_COLUMNS), "--max-columns-preview");
    args.push("--max-filesize", String(MAX_CONTENT_BYTES));
    if (req.ignoreCase) args.push("--ignore-case");
    args.push("--regexp", req.regex ?? "");
  }
  // Always a path: given none, ripgrep would search its stdin (a pipe here), not the folder.
  args.push("--", req.searchPath);
  return args;
}

/** A workspace-relative path as ripgrep, grep or find print it (`./a/b` → `a/b`). */
export function toRel(path: string): string {
  return path.startsWith("./") ? path.slice(2) : path;
}

/**
 * One line of ripgrep's output (or grep's: both print `path NUL line-number : text`) as a hit;
 * undefined when malformed. The text is cut to what a hit shows.
 */
export function ripgrepHit(line: string, mode: SearchRequest["mode"]): SearchHit | undefined {
  if (mode === "names") return { path: toRel(line) };
  const nul = line.indexOf("\0");
  const colon = line.indexOf(":", nul + 1);
  const number = Number(line.slice(nul + 1, colon));
  if (nul < 0 || colon < 0 || !Number.isInteger(number)) return undefined;
  return { path: toRel(line.slice(0, nul)), line: number, text: hitText(line.slice(colon + 1)) };
}
