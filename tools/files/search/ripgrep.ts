import { spawn } from "node:child_process";
import { access, constants } from "node:fs/promises";
import { delimiter, join, relative, sep } from "node:path";
import { createInterface } from "node:readline";
import { HeraldError } from "../../../core/errors.js";
import type { SearchHit, SearchOutcome, SearchRequest } from "./types.js";

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

function toRel(path: string): string {
  const clean = path.startsWith(`.${sep}`) ? path.slice(2) : path;
  return clean.split(sep).join("/");
}

/**
 * Runs ripgrep (arguments as an array, no shell) from the workspace root. It honours `.gitignore`,
 * `.ignore` and `.rgignore` even outside a git repository, skips hidden files, symlinks, binaries and
 * `node_modules`, and ignores the user's ripgrep config and global gitignore so results match the JS
 * walk. Stops ripgrep once `maxHits` hits are collected.
 * @throws HeraldError `invalid_input` for a regex ripgrep rejects (its message included), `tool_error`
 *   when ripgrep fails with nothing found.
 */
export async function ripgrepSearch(req: SearchRequest): Promise<SearchOutcome> {
  const args = ["--no-config", "--no-require-git", "--no-ignore-global", "--glob", "!node_modules"];
  if (req.nameGlob) args.push("--type-add", `herald:${req.nameGlob}`, "--type", "herald");
  if (req.mode === "names") args.push("--files");
  else {
    args.push("--json");
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
  for await (const line of createInterface({ input: child.stdout, crlfDelay: Number.POSITIVE_INFINITY })) {
    let hit: SearchHit | undefined;
    if (req.mode === "names") hit = { path: toRel(line) };
    else {
      const event = JSON.parse(line) as RgMatch;
      if (event.type !== "match" || !event.data) continue;
      hit = {
        path: toRel(rgText(event.data.path)),
        line: event.data.line_number ?? 0,
        text: rgText(event.data.lines).replace(/\r?\n$/, ""),
      };
    }
    if (!req.accept(hit.path)) continue;
    hits.push(hit);
    if (hits.length >= req.maxHits) {
      complete = false;
      child.kill();
      break;
    }
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
    if (hits.length === 0)
      throw new HeraldError(`ripgrep failed: ${stderr.trim().slice(0, 600)}`, { code: "tool_error" });
  }
  return { hits, complete };
}
