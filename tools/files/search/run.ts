/**
 * The search as one command where the workspace's commands run (the backend's spawn): ripgrep when it
 * is installed there, else `find` and `grep`. Nothing of it walks the workspace from the gateway. The
 * first line of output names the engine that ran (`@rg` or `@grep`), so the output is read right.
 *
 * Without ripgrep: hidden entries and `node_modules` are skipped, symbolic links are not followed,
 * binary files are skipped (`grep -I`), regular expressions are Perl-style (`grep -P`) where grep has
 * it, else extended; `.gitignore` files are not read.
 */
import { createInterface } from "node:readline";
import { HeraldError } from "../../../core/errors.js";
import { shellQuote } from "../../../exec/index.js";
import { globMatcher } from "./glob.js";
import { ripgrepArgs, ripgrepHit, toRel } from "./ripgrep.js";
import type { SearchHit, SearchOutcome, SearchRequest } from "./types.js";

/** The `find` expression: every regular file under `$p`, hidden entries and node_modules pruned. */
const FIND = `find "$p" \\( \\( -name '.*' ! -path "$p" \\) -o -name node_modules \\) -prune -o -type f`;

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
          `${FIND} -print0 | xargs -0 -r grep ${grepFlags} "$m" -e ${shellQuote(req.regex ?? "")} --`,
        ].join("\n"),
  ].join("\n");
  if (req.engine === "ripgrep")
    return `command -v rg >/dev/null 2>&1 || { echo "ripgrep (rg) is not installed where commands run" >&2; exit 127; }\n${rg}`;
  if (req.engine === "grep") return grep;
  return `if command -v rg >/dev/null 2>&1; then ${rg}; fi\n${grep}`;
}

/** One line of grep's (or find's) output as a hit. */
function grepHit(line: string, mode: SearchRequest["mode"]): SearchHit | undefined {
  if (mode === "names") return { path: toRel(line) };
  const nul = line.indexOf("\0");
  if (nul < 0) return undefined;
  const rest = line.slice(nul + 1);
  const colon = rest.indexOf(":");
  return {
    path: toRel(line.slice(0, nul)),
    line: Number(rest.slice(0, colon)),
    text: rest.slice(colon + 1).replace(/\r$/, ""),
  };
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
  try {
    for await (const line of createInterface({ input: proc.stdout, crlfDelay: Number.POSITIVE_INFINITY })) {
      if (engine === undefined) {
        if (line === "@rg" || line === "@grep") engine = line === "@rg" ? "rg" : "grep";
        continue;
      }
      const hit = engine === "rg" ? ripgrepHit(line, req.mode) : grepHit(line, req.mode);
      if (!hit || !req.accept(hit.path)) continue;
      if (engine === "grep" && !nameOk(hit.path)) continue;
      hits.push(hit);
      if (hits.length >= req.maxHits) {
        complete = false;
        stop();
        break;
      }
    }
    const status = await proc.exited;
    req.signal?.throwIfAborted();
    if (timedOut) return { hits, complete: false };
    const failed =
      engine === "rg" ? status.exitCode === 2 : (status.exitCode ?? 0) > 1 && /grep:/.test(stderr);
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
