import { HeraldError } from "../../core/errors.js";
import { bomEncoding, formatBytes, isBinary } from "../../documents/index.js";
import { displayPath, formatCount, readWhole, statPath } from "./common.js";
import { linesOf, replacementSnippet } from "./diff.js";
import { type PatchFileArgs, parseArgs, patchFileArgsSchema } from "./schemas.js";
import type { FileScope, FileToolOptions } from "./types.js";

const MAX_PATCH_BYTES = 20 * 1024 * 1024;

/** Start indices of every non-overlapping occurrence of `needle`. */
function occurrences(haystack: string, needle: string): number[] {
  const found: number[] = [];
  for (let i = haystack.indexOf(needle); i >= 0; i = haystack.indexOf(needle, i + needle.length))
    found.push(i);
  return found;
}

/** Lines where `needle` occurs once all whitespace is ignored on both sides (for the "not found" hint). */
function whitespaceInsensitiveLines(text: string, needle: string): number[] {
  const squeezedNeedle = needle.replace(/\s+/g, "");
  if (squeezedNeedle === "") return [];
  const parts: string[] = [];
  const origin: number[] = [];
  for (const m of text.matchAll(/\S+/g)) {
    parts.push(m[0]);
    for (let j = 0; j < m[0].length; j++) origin.push(m.index + j);
  }
  const squeezed = parts.join("");
  return linesOf(
    text,
    occurrences(squeezed, squeezedNeedle).map((i) => origin[i] ?? 0),
  );
}

function listLines(lines: number[]): string {
  const shown = lines.slice(0, 10).join(", ");
  return lines.length > 10 ? `${shown}, … ${lines.length - 10} more` : shown;
}

/**
 * Replaces exact text in a file and writes it atomically. `old_string` must occur exactly once unless
 * `replace_all`. When the file uses CRLF line ends and `old_string` uses LF, both strings are read with
 * CRLF. The file's permissions are kept.
 * @returns a line saying what changed, then a short unified-diff-like snippet.
 * @throws ToolArgsError for bad arguments; HeraldError `not_found` (no file), `invalid_input` (no match —
 *   with the lines of a whitespace-insensitive match if one exists —, several matches without
 *   `replace_all` — with their count and lines —, no change, a binary file).
 */
export async function patchFile(
  scope: FileScope,
  args: PatchFileArgs,
  options: FileToolOptions = {},
): Promise<string> {
  const parsed = parseArgs(patchFileArgsSchema, args, "patch_file");
  const rel = scope.resolve(parsed.path);
  const shown = displayPath(rel);
  const info = await statPath(scope, rel, "; to create a file use write_file");
  if (info.kind !== "file")
    throw new HeraldError(`${shown} is not a regular file`, { code: "invalid_input" });
  if (info.sizeBytes > MAX_PATCH_BYTES)
    throw new HeraldError(
      `${shown} is ${formatBytes(info.sizeBytes)}, too large to patch (limit ${formatBytes(MAX_PATCH_BYTES)})`,
      {
        code: "invalid_input",
      },
    );
  const bytes = await readWhole(scope, rel, info.sizeBytes, options.signal);
  if (isBinary(bytes))
    throw new HeraldError(`${shown} is a binary file; patch_file edits text only`, { code: "invalid_input" });
  if (bomEncoding(bytes)?.startsWith("utf-16"))
    throw new HeraldError(
      `${shown} is UTF-16 text; patch_file edits UTF-8 files only (rewrite it with write_file)`,
      {
        code: "invalid_input",
      },
    );
  const original = bytes.toString("utf8");

  let oldText = parsed.old_string;
  let newText = parsed.new_string;
  if (oldText === newText)
    throw new HeraldError("old_string and new_string are the same; nothing to change", {
      code: "invalid_input",
    });
  let found = occurrences(original, oldText);
  if (found.length === 0 && original.includes("\r\n") && /(^|[^\r])\n/.test(oldText)) {
    const crlf = (s: string) => s.replace(/\r?\n/g, "\r\n");
    const retry = occurrences(original, crlf(oldText));
    if (retry.length > 0) {
      found = retry;
      oldText = crlf(oldText);
      newText = crlf(newText);
    }
  }
  if (found.length === 0) {
    const near = whitespaceInsensitiveLines(original, oldText);
    const hint =
      near.length > 0
        ? `; ignoring whitespace it would match at line ${listLines(near)}: copy the exact text, indentation included, from read_file`
        : "; read the file again and copy the text exactly";
    throw new HeraldError(`old_string was not found in ${shown}${hint}`, { code: "invalid_input" });
  }
  if (found.length > 1 && !parsed.replace_all) {
    const lines = linesOf(original, found);
    throw new HeraldError(
      `old_string occurs ${found.length} times in ${shown} (lines ${listLines(lines)}); add surrounding lines to make it unique, or set replace_all to replace every one`,
      { code: "invalid_input" },
    );
  }
  let updated = "";
  let last = 0;
  for (const index of found) {
    updated += original.slice(last, index) + newText;
    last = index + oldText.length;
  }
  updated += original.slice(last);
  options.signal?.throwIfAborted();
  await scope.files.write(rel, Buffer.from(updated, "utf8"));
  const [firstLine] = linesOf(original, found.slice(0, 1));
  const what =
    found.length === 1 ? `1 replacement at line ${firstLine}` : `${formatCount(found.length)} replacements`;
  return `Patched ${shown}: ${what}\n${replacementSnippet(original, found, oldText, newText)}`;
}
