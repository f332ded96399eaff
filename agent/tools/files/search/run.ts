/**
 * The search as one command where the workspace's commands run (the backend's spawn): ripgrep when it
 * is installed there, else `find` and `grep`. Nothing of it walks the workspace from the gateway. The
 * first line of output names the engine that ran (`@rg` or `@grep`), so the output is read right.
 *
 * Without ripgrep: hidden entries and `node_modules` are skipped, symbolic links are not followed,
 * binary files are skipped (`grep -I`), regular expressions are Perl-style (`grep -P`) where grep has
 * it, else extended; `.gitignore` files are not read. Either way content search skips files over
 * `MAX_CONTENT_BYTES`, and the output is read in bounded memory (a line of it is cut at
 * `MAX_OUTPUT_LINE_CHARS`; a hit keeps what `hitText` keeps).
 */
import { HeraldError } from "../../../../core/errors.js";
import { shellQuote } from "../../../exec/index.js";
import { LineSplitter } from "../line-splitter.js";
import { globMatcher } from "./glob.js";
import { MAX_CONTENT_BYTES } from "./limits.js";
import { ripgrepArgs, ripgrepHit } from "./ripgrep.js";
import type { SearchHit, SearchOutcome, SearchRequest } from "./types.js";

/** The `find` expression: every regular file under `$p`, hidden entries and node_modules pruned. */
const FIND = `find "$p" \\( \\( -name '.*' ! -path "$p" \\) -o -name node_modules \\) -prune -o -type f`;
/** Characters of one line of the search's output read at most (a path and a preview are far shorter). */
const MAX_OUTPUT_LINE_CHARS = 16_384;

/** The shell script of one search (see the module comment). */
export function searchScript(req: SearchRequest): string {
  const rg = `echo @rg; exec rg ${ripgrepArgs(req).map(shellQuote).join(" ")}`;
  const grepFlags = ["-n", "-H", "-I", "-Z", ...(req.ignoreCase ? ["-i"] : [])].join(" ");
  const grep = [
    `p=${shellQuote(req.searchPath)}`,
    "echo @grep",
    req.mode === "names"
      ? `${FIND} -print`
      : [
          `grep -P x /dev/null 2>/dev/null; [ $? -eq 2 ] && m=-E || m=-P`,
          `${FIND} -size -${Math.floor(MAX_CONTENT_BYTES / 1024)}k -print0 | xargs -0 -r grep ${grepFlags} "$m" -e ${shellQuote(req.regex ?? "")} --`,
        ].join("\n"),
  ].join("\n");
  if (req.engine === "ripgrep")
    return `command -v rg >/dev/null 2>&1 || { echo "ripgrep (rg) is not installed where commands run" >&2; exit 127; }\n${rg}`;
  if (req.engine === "grep") return grep;
  return `if command -v rg >/dev/null 2>&1; then ${rg}; fi\n${grep}`;
}

/**
 * Runs the search and collects its hits, stopping (and killing the command) at `maxHits` or its time.
 * @throws HeraldError `invalid_input` for a regular expression the engine rejects (its message
 *   included), `tool_error` when the search fails with nothing found.
 */
export async function runSearch(req: SearchRequest): Promise<SearchOutcome> {
  req.signal?.throwIfAborted();
  const proc = req.spawn({ command: searchScript(req) });
  let stderr = "";
  proc.stderr.on("data", (chunk: string) => {
    if (stderr.length < 4_000) stderr += chunk;
  });
  const stop = () => proc.kill("SIGKILL");
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, req.timeoutMs);
  req.signal?.addEventListener("abort", stop, { once: true });
  proc.closeStdin();
  const nameOk = req.nameGlob ? globMatcher(req.nameGlob) : () => true;
  const hits: SearchHit[] = [];
  let complete = true;
  let engine: "rg" | "grep" | undefined;
  const splitter = new LineSplitter({
    maxLineChars: MAX_OUTPUT_LINE_CHARS,
    wants: () => complete,
    onLine: (_n, line) => {
      if (engine === undefined) {
        if (line === "@rg" || line === "@grep") engine = line === "@rg" ? "rg" : "grep";
        return;
      }
      const hit = ripgrepHit(line, req.mode);
      if (!hit || !req.accept(hit.path)) return;
      if (engine === "grep" && !nameOk(hit.path)) return;
      hits.push(hit);
      if (hits.length >= req.maxHits) {
        complete = false;
        stop();
      }
    },
  });
  try {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stdout as AsyncIterable<string | Uint8Array>) {
      splitter.push(typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true }));
      if (!complete) break;
    }
    if (complete) splitter.end();
    const status = await proc.exited;
    req.signal?.throwIfAborted();
    if (timedOut) return { hits, complete: false };
    // Every file over --max-filesize (or ignored) is "nothing matched", as grep's find says too.
    const failed =
      engine === "rg"
        ? status.exitCode === 2 && !/No files were searched/.test(stderr)
        : (status.exitCode ?? 0) > 1 && /grep:/.test(stderr);
    if (complete && (failed || status.exitCode === 127)) {
      const message = stderr.trim().slice(0, 600);
      if (
        /regex parse error|error parsing|unrecognized|unmatched|invalid|missing|quantifier|nothing to repeat|out of order|escape/i.test(
          message,
        )
      )
        throw new HeraldError(`the pattern is not a valid regular expression: ${message}`, {
          code: "invalid_input",
        });
      if (hits.length === 0)
        throw new HeraldError(`the search failed: ${message || `exit ${status.exitCode}`}`, {
          code: "tool_error",
        });
    }
    return { hits, complete };
  } finally {
    clearTimeout(timer);
    req.signal?.removeEventListener("abort", stop);
  }
}
