import { access, constants } from "node:fs/promises";
import { delimiter, join } from "node:path";
import type { SearchHit, SearchRequest } from "./types.js";

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
    args.push("--json");
    if (req.ignoreCase) args.push("--ignore-case");
    args.push("--regexp", req.regex ?? "");
  }
  // Always a path: given none, ripgrep would search its stdin (a pipe here), not the folder.
  args.push("--", req.searchPath);
  return args;
}

interface RgText {
  text?: string;
  bytes?: string;
}
interface RgMatch {
  type: string;
  data?: { path?: RgText; lines?: RgText; line_number?: number };
}

function rgText(value: RgText | undefined): string {
  if (!value) return "";
  return value.text ?? Buffer.from(value.bytes ?? "", "base64").toString("utf8");
}

/** A workspace-relative path as ripgrep, grep or find print it (`./a/b` → `a/b`). */
export function toRel(path: string): string {
  return path.startsWith("./") ? path.slice(2) : path;
}

/** One line of ripgrep's output as a hit (undefined for JSON events that are not matches). */
export function ripgrepHit(line: string, mode: SearchRequest["mode"]): SearchHit | undefined {
  if (mode === "names") return { path: toRel(line) };
  const event = JSON.parse(line) as RgMatch;
  if (event.type !== "match" || !event.data) return undefined;
  return {
    path: toRel(rgText(event.data.path)),
    line: event.data.line_number ?? 0,
    text: rgText(event.data.lines).replace(/\r?\n$/, ""),
  };
}
