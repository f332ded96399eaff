import { HeraldError } from "../../../core/errors.js";
import { capOutput, displayPath, formatCount, statPath } from "./common.js";
import { parseArgs, type SearchFilesArgs, searchFilesArgsSchema } from "./schemas.js";
import { globMatcher } from "./search/glob.js";
import { runSearch } from "./search/run.js";
import type { SearchEngine, SearchHit, SearchRequest } from "./search/types.js";
import type { FileScope, FileToolOptions } from "./types.js";

/** Options of `searchFiles`. */
export interface SearchFilesOptions extends FileToolOptions {
  /**
   * `ripgrep` (fails where it is missing), `grep` (find and grep), `auto`: ripgrep when installed where
   * commands run. @defaultValue "auto"
   */
  engine?: SearchEngine;
  /** The longest a search may run; it then shows what it found. @defaultValue 60_000 */
  timeoutMs?: number;
  /** Hits collected before the search stops (the count of the rest is then a lower bound). @defaultValue 10_000 */
  maxCollected?: number;
  /** Characters of output. @defaultValue 50_000 */
  maxOutputChars?: number;
}

/**
 * How a name pattern matches: a regular expression when it looks like one (`\`, `^`, `$`, `(`, `|`,
 * `+`, `.*`), a glob when it has `*`, `?`, `[` or `{`, else a substring of the base name. Matching is
 * case-insensitive; regexes and globs with `/` see the workspace-relative path.
 */
export function nameMatcher(pattern: string): (relPath: string) => boolean {
  if (/[\\^$()|+]|\.\*/.test(pattern)) {
    let re: RegExp;
    try {
      re = new RegExp(pattern, "i");
    } catch (err) {
      throw new HeraldError(`the pattern is not a valid regular expression: ${(err as Error).message}`, {
        code: "invalid_input",
      });
    }
    return (rel) => re.test(rel);
  }
  if (/[*?[{]/.test(pattern)) return globMatcher(pattern, true);
  const needle = pattern.toLowerCase();
  return (rel) =>
    rel
      .slice(rel.lastIndexOf("/") + 1)
      .toLowerCase()
      .includes(needle);
}

function byPathThenLine(a: SearchHit, b: SearchHit): number {
  if (a.path !== b.path) return a.path < b.path ? -1 : 1;
  return (a.line ?? 0) - (b.line ?? 0);
}

/**
 * Finds files by name (`content` false, the default) or lines by regular expression (`content` true)
 * under `path` (default: the workspace root), optionally narrowed by `glob` (base name, or a
 * workspace-relative path when it has `/`). Runs where the workspace's commands run: ripgrep when installed there, else find and grep
 * (see `search/run.ts` for what differs). Results are sorted by path then line; at most `limit` are shown and the
 * rest counted.
 * @throws ToolArgsError for bad arguments; HeraldError `invalid_input` (invalid regex), `not_found`
 *   (no such path), `tool_error` (the search failed, or ripgrep was required and missing).
 */
export async function searchFiles(
  scope: FileScope,
  args: SearchFilesArgs,
  options: SearchFilesOptions = {},
): Promise<string> {
  const parsed = parseArgs(searchFilesArgsSchema, args, "search_files");
  const { maxCollected = 10_000, maxOutputChars = 50_000, signal } = options;
  const limit = parsed.limit ?? 100;
  const searchPath = scope.resolve(parsed.path ?? ".");
  const shownPath = displayPath(searchPath);
  await statPath(scope, searchPath);
  const mode = parsed.content ? "content" : "names";

  const filters: ((rel: string) => boolean)[] = [];
  let nameGlob: string | undefined;
  if (parsed.glob?.includes("/")) filters.push(globMatcher(parsed.glob));
  else nameGlob = parsed.glob;
  if (mode === "names") filters.push(nameMatcher(parsed.pattern));
  const request: SearchRequest = {
    searchPath,
    mode,
    regex: parsed.pattern,
    ignoreCase: parsed.ignoreCase ?? false,
    nameGlob,
    accept: (rel) => filters.every((f) => f(rel)),
    maxHits: Math.max(maxCollected, limit),
    engine: options.engine ?? "auto",
    spawn: (req) => scope.spawn(req),
    timeoutMs: options.timeoutMs ?? 60_000,
    signal,
  };
  const outcome = await runSearch(request);
  const hits = outcome.hits.sort(byPathThenLine);

  const where = shownPath === "." ? "the workspace" : shownPath;
  if (hits.length === 0)
    return mode === "names"
      ? `No files named like "${parsed.pattern}" in ${where}${parsed.glob ? ` (glob ${parsed.glob})` : ""}`
      : `No lines match /${parsed.pattern}/ in ${where}${parsed.glob ? ` (glob ${parsed.glob})` : ""}`;
  const shown = hits.slice(0, limit);
  const body = shown
    .map((h) => (mode === "names" ? h.path : `${h.path}:${h.line}: ${h.text ?? ""}`))
    .join("\n");
  const total = `${outcome.complete ? "" : "more than "}${formatCount(hits.length)}`;
  const files = new Set(hits.map((h) => h.path)).size;
  const plural = (n: number, word: string) => `${word}${n === 1 ? "" : "s"}`;
  const unit =
    mode === "names"
      ? plural(hits.length, "file")
      : `matching ${plural(hits.length, "line")} in ${formatCount(files)}${outcome.complete ? "" : "+"} ${plural(files, "file")}`;
  const hidden = hits.length - shown.length;
  const footer =
    hidden > 0 || !outcome.complete
      ? `(${total} ${unit}; ${outcome.complete ? formatCount(hidden) : "many"} more not shown: narrow the pattern, path or glob)`
      : `(${total} ${unit})`;
  return capOutput(`${body}\n${footer}`, maxOutputChars);
}
