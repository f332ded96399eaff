import { spawn } from "node:child_process";
import { access, constants } from "node:fs/promises";
import { delimiter, join, relative, sep } from "node:path";
import { HeraldError } from "../../../core/errors.js";
import { LineSplitter } from "../line-splitter.js";
import { hitText, MAX_CONTENT_BYTES } from "./limits.js";
import type { SearchHit, SearchOutcome, SearchRequest } from "./types.js";

/**
 * Bytes of a matching line ripgrep prints (a longer one becomes a preview of this many bytes): at least
 * the 300 characters a hit shows, whatever their UTF-8 width. Its `--json` output has no such limit: a
 * match in a file of one 500 MB line was one 500 MB JSON line, plus an entry per match.
 */
const RG_MAX_COLUMNS = 1200;
/** Characters of one line of ripgrep's output read at most (a path and a preview are far shorter). */
const MAX_OUTPUT_LINE_CHARS = 16_384;

let found: Promise<boolean> | undefined;

/** True when an executable `rg` is on PATH (looked up once per process). */
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

function toRel(path: string): string {
  const clean = path.startsWith(`.${sep}`) ? path.slice(2) : path;
  return clean.split(sep).join("/");
}

/** A content hit out of one line of output: `path NUL line-number : text`; undefined if malformed. */
function contentHit(line: string): SearchHit | undefined {
  const nul = line.indexOf("\0");
  const colon = line.indexOf(":", nul + 1);
  const number = Number(line.slice(nul + 1, colon));
  if (nul < 0 || colon < 0 || !Number.isInteger(number)) return undefined;
  return { path: toRel(line.slice(0, nul)), line: number, text: hitText(line.slice(colon + 1)) };
}

/**
 * Runs ripgrep (arguments as an array, no shell) from the workspace root. It honours `.gitignore`,
 * `.ignore` and `.rgignore` even outside a git repository, skips hidden files, symlinks, binaries and
 * `node_modules`, and ignores the user's ripgrep config and global gitignore so results match the JS
 * walk. Its output is read in bounded memory (long lines come as previews); it is stopped once
 * `maxHits` hits are collected.
 * @throws HeraldError `invalid_input` for a regex ripgrep rejects (its message included), `tool_error`
 *   when ripgrep fails with nothing found.
 */
export async function ripgrepSearch(req: SearchRequest): Promise<SearchOutcome> {
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
  args.push("--");
  const rel = relative(req.root, req.searchPath);
  if (rel !== "") args.push(rel);

  const child = spawn("rg", args, { cwd: req.root, signal: req.signal, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    if (stderr.length < 4000) stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve(code));
  });
  const hits: SearchHit[] = [];
  let complete = true;
  const splitter = new LineSplitter({
    maxLineChars: MAX_OUTPUT_LINE_CHARS,
    wants: () => complete,
    onLine: (_n, line) => {
      const hit = req.mode === "names" ? { path: toRel(line) } : contentHit(line);
      if (!hit || !req.accept(hit.path)) return;
      hits.push(hit);
      if (hits.length >= req.maxHits) {
        complete = false;
        child.kill();
      }
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
    splitter.push(decoder.decode(chunk, { stream: true }));
    if (!complete) break;
  }
  if (complete) {
    splitter.push(decoder.decode());
    splitter.end();
  }
  const code = await exited.catch((err: unknown) => {
    if (req.signal?.aborted) throw req.signal.reason;
    throw new HeraldError(`ripgrep could not run: ${(err as Error).message}`, {
      code: "tool_error",
      cause: err,
    });
  });
  req.signal?.throwIfAborted();
  if (code === 2 && complete) {
    if (/regex parse error|error parsing|unrecognized/i.test(stderr))
      throw new HeraldError(`the pattern is not a valid regular expression: ${stderr.trim().slice(0, 600)}`, {
        code: "invalid_input",
      });
    // Every file was over --max-filesize (or ignored): nothing matched, as the JS walk says too.
    if (hits.length === 0 && !/No files were searched/.test(stderr))
      throw new HeraldError(`ripgrep failed: ${stderr.trim().slice(0, 600)}`, { code: "tool_error" });
  }
  return { hits, complete };
}
