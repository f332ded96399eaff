import { createReadStream, type Dirent } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { HeraldError } from "../../../core/errors.js";
import { LineSplitter } from "../line-splitter.js";
import { globMatcher } from "./glob.js";
import { type IgnoreLayer, isIgnored, readIgnoreLayer } from "./ignore.js";
import { hitText, MAX_CONTENT_BYTES } from "./limits.js";
import type { SearchHit, SearchOutcome, SearchRequest } from "./types.js";

/** Files up to this size are read whole (one quick test rules most out); larger ones are streamed. */
const WHOLE_READ_BYTES = 1024 * 1024;
/** Characters of a line the regular expression is tested on (ripgrep tests whole lines). */
const MAX_TESTED_LINE_CHARS = 65_536;
/** How far in a file a NUL byte makes it a binary (ripgrep's rule, in its first block). */
const BINARY_SNIFF_BYTES = 64 * 1024;
const READ_CONCURRENCY = 32;

function toRel(root: string, abs: string): string {
  return relative(root, abs).split(sep).join("/");
}

/** Ignore layers of the directories from the root down to `dir`, inclusive. */
async function layersDownTo(root: string, dir: string): Promise<IgnoreLayer[]> {
  const layers: IgnoreLayer[] = [];
  const rel = toRel(root, dir);
  const parts = rel === "" || rel.startsWith("..") ? [] : rel.split("/");
  let current = rel.startsWith("..") ? dir : root;
  let base = "";
  for (let k = 0; k <= parts.length; k++) {
    const layer = await readIgnoreLayer(current, base);
    if (layer) layers.push(layer);
    const next = parts[k];
    if (next === undefined) break;
    current = join(current, next);
    base = base === "" ? next : `${base}/${next}`;
  }
  return layers;
}

/** Lists the files under `dir` the way ripgrep does, depth first in name order. */
async function listFiles(
  req: SearchRequest,
  dir: string,
  layers: IgnoreLayer[],
  out: string[],
): Promise<void> {
  req.signal?.throwIfAborted();
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return; // unreadable directory: ripgrep skips it too (with a warning we do not show)
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (entry.name.startsWith(".") || entry.name === "node_modules" || entry.isSymbolicLink()) continue;
    const abs = join(dir, entry.name);
    const rel = toRel(req.root, abs);
    const isDir = entry.isDirectory();
    if (isIgnored(layers, rel, isDir)) continue;
    if (isDir) {
      const layer = await readIgnoreLayer(abs, rel);
      await listFiles(req, abs, layer ? [...layers, layer] : layers, out);
    } else if (entry.isFile()) out.push(abs);
  }
}

async function searchContent(req: SearchRequest, files: string[]): Promise<SearchOutcome> {
  let regex: RegExp;
  try {
    regex = new RegExp(req.regex ?? "", req.ignoreCase ? "i" : "");
  } catch (err) {
    throw new HeraldError(`the pattern is not a valid regular expression: ${(err as Error).message}`, {
      code: "invalid_input",
    });
  }
  const quick = new RegExp(regex.source, `${regex.flags}m`);
  const hits: SearchHit[] = [];
  const grep = async (abs: string): Promise<SearchHit[]> => {
    const info = await stat(abs).catch(() => undefined);
    if (!info || info.size > MAX_CONTENT_BYTES) return [];
    const rel = toRel(req.root, abs);
    const found: SearchHit[] = [];
    // Lines as ripgrep sees them ("\r" kept for the test), each at most MAX_TESTED_LINE_CHARS.
    const splitter = new LineSplitter({
      maxLineChars: MAX_TESTED_LINE_CHARS,
      keepCr: true,
      onLine: (n, line) => {
        if (regex.test(line)) found.push({ path: rel, line: n, text: hitText(line) });
      },
    });
    if (info.size <= WHOLE_READ_BYTES) {
      const bytes = await readFile(abs).catch(() => undefined);
      if (!bytes || bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return [];
      const text = bytes.toString("utf8");
      // Most files do not match: one multiline test of the whole text rules them out without splitting.
      // It can only over-match (`\s` may span a line break), and the line-by-line test below decides.
      if (!quick.test(text)) return [];
      splitter.push(text);
    } else {
      // Streamed: a large file costs a chunk and a line, and the search stops with the turn.
      const decoder = new TextDecoder();
      let head = true;
      try {
        for await (const chunk of createReadStream(abs, { signal: req.signal }) as AsyncIterable<Buffer>) {
          if (head && chunk.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return [];
          head = false;
          splitter.push(decoder.decode(chunk, { stream: true }));
        }
      } catch (err) {
        if (req.signal?.aborted) throw err;
        return []; // unreadable: skipped, as ripgrep skips it
      }
      splitter.push(decoder.decode());
    }
    splitter.end();
    return found;
  };
  for (let k = 0; k < files.length; k += READ_CONCURRENCY) {
    req.signal?.throwIfAborted();
    const batch = await Promise.all(files.slice(k, k + READ_CONCURRENCY).map(grep));
    for (const found of batch) {
      for (const hit of found) {
        hits.push(hit);
        if (hits.length >= req.maxHits) return { hits, complete: false };
      }
    }
  }
  return { hits, complete: true };
}

/**
 * The search without ripgrep: walks the tree in name order honouring the same ignore files, skipping
 * hidden entries, symlinks and `node_modules`; content search skips binaries (a NUL byte) and files over
 * 50 MB and tests a JavaScript regular expression on each line (on its first 65,536 characters), in
 * bounded memory: files over 1 MB are streamed, and a hit keeps 300 characters of its line.
 * @throws HeraldError `invalid_input` for an invalid regular expression.
 */
export async function walkSearch(req: SearchRequest): Promise<SearchOutcome> {
  const info = await stat(req.searchPath);
  const nameOk = req.nameGlob ? globMatcher(req.nameGlob) : () => true;
  let files: string[] = [];
  if (info.isDirectory())
    await listFiles(req, req.searchPath, await layersDownTo(req.root, req.searchPath), files);
  else files = [req.searchPath];
  files = files.filter((abs) => {
    const rel = toRel(req.root, abs);
    return nameOk(rel) && req.accept(rel);
  });
  if (req.mode === "content") return searchContent(req, files);
  const complete = files.length <= req.maxHits;
  return { hits: files.slice(0, req.maxHits).map((abs) => ({ path: toRel(req.root, abs) })), complete };
}
