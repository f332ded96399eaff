/**
 * The part of gitignore the JS search fallback honours, so it lists what ripgrep lists: `.gitignore`,
 * `.ignore` and `.rgignore` in every directory from the workspace root down, comments, `!` negation
 * (last match wins), trailing `/` for directories, leading or inner `/` anchoring, `*`, `?`, `**`.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { globToRegexSource } from "./glob.js";

interface IgnoreRule {
  regex: RegExp;
  negate: boolean;
  dirOnly: boolean;
  anchored: boolean;
}

/** Ignore rules of one directory, relative to it. */
export interface IgnoreLayer {
  /** The directory's path relative to the search root ("" for the root). */
  base: string;
  rules: IgnoreRule[];
}

const IGNORE_FILES = [".gitignore", ".ignore", ".rgignore"];

function parseRules(text: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (let line of text.split(/\r?\n/)) {
    line = line.replace(/(?<!\\)\s+$/, "");
    if (line === "" || line.startsWith("#")) continue;
    const negate = line.startsWith("!");
    if (negate) line = line.slice(1);
    const dirOnly = line.endsWith("/");
    if (dirOnly) line = line.slice(0, -1);
    const anchored = line.includes("/");
    const glob = line.replace(/^\//, "");
    rules.push({ regex: new RegExp(`^${globToRegexSource(glob)}$`), negate, dirOnly, anchored });
  }
  return rules;
}

/** Reads the ignore files of `dir` (absolute), or undefined when it has none. */
export async function readIgnoreLayer(dir: string, base: string): Promise<IgnoreLayer | undefined> {
  const rules: IgnoreRule[] = [];
  for (const name of IGNORE_FILES) {
    const text = await readFile(join(dir, name), "utf8").catch(() => undefined);
    if (text !== undefined) rules.push(...parseRules(text));
  }
  return rules.length > 0 ? { base, rules } : undefined;
}

/** True when the entry at `relPath` (relative to the search root) is ignored by the layers above it. */
export function isIgnored(layers: IgnoreLayer[], relPath: string, isDir: boolean): boolean {
  let ignored = false;
  for (const layer of layers) {
    const rel = layer.base === "" ? relPath : relPath.slice(layer.base.length + 1);
    const name = rel.slice(rel.lastIndexOf("/") + 1);
    for (const rule of layer.rules) {
      if (rule.dirOnly && !isDir) continue;
      if (rule.regex.test(rule.anchored ? rel : name)) ignored = !rule.negate;
    }
  }
  return ignored;
}
