import { HeraldError } from "../../../core/errors.js";
import { bomEncoding, formatBytes, isBinary } from "../../documents/index.js";
import { displayPath, formatCount, readUpTo, statPath } from "./common.js";
import { linesOf, replacementSnippet } from "./diff.js";
import { type PatchFileArgs, parseArgs, patchFileArgsSchema } from "./schemas.js";
import type { FileScope, FileToolOptions } from "./types.js";

/**
 * The largest file patch edits, before and after the edit. The file, its text, the edited text and the
 * bytes written are all in memory at once: about five times this at the peak, which a gateway with a
 * small heap (a 512 MB VPS) still affords.
 */
const MAX_PATCH_BYTES = 10 * 1024 * 1024;
/** Replacements one `replace_all` makes at most (each is an index and a piece of the diff). */
const MAX_REPLACEMENTS = 10_000;
/** Files up to this size get the "it would match ignoring whitespace" hint (4 bytes per character). */
const MAX_HINT_CHARS = 2 * 1024 * 1024;

/** Start indices of the non-overlapping occurrences of `needle`, at most `max` of them. */
function occurrences(haystack: string, needle: string, max: number): number[] {
  const found: number[] = [];
  for (
    let i = haystack.indexOf(needle);
    i >= 0 && found.length < max;
    i = haystack.indexOf(needle, i + needle.length)
  )
    found.push(i);
  return found;
}

/** Lines where `needle` occurs once all whitespace is ignored on both sides (for the "not found" hint). */
function whitespaceInsensitiveLines(text: string, needle: string): number[] {
  const squeezedNeedle = needle.replace(/\s+/g, "");
  if (squeezedNeedle === "" || text.length > MAX_HINT_CHARS) return [];
  // Where each character of the squeezed text was in `text`: one typed array, not an array per token.
  const origin = new Int32Array(text.length);
  let k = 0;
  for (const m of text.matchAll(/\S+/g)) for (let j = 0; j < m[0].length; j++) origin[k++] = m.index + j;
  const squeezed = text.replace(/\s+/g, "");
  return linesOf(
    text,
    occurrences(squeezed, squeezedNeedle, 11).map((i) => origin[i] ?? 0),
  );
}

/** The refusal of an edit past `MAX_PATCH_BYTES`; `what` says what is too large ("x.log is 12 MB"). */
function tooLarge(what: string): HeraldError {
  return new HeraldError(
    `${what}, too large to patch (limit ${formatBytes(MAX_PATCH_BYTES)}); edit it with a command in the terminal (sed, a script) instead`,
    { code: "invalid_input" },
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
  if (info.sizeBytes > MAX_PATCH_BYTES) throw tooLarge(`${shown} is ${formatBytes(info.sizeBytes)}`);
  const bytes = await readUpTo(scope, rel, MAX_PATCH_BYTES, options.signal);
  if (bytes.length > MAX_PATCH_BYTES) throw tooLarge(`${shown} is over ${formatBytes(MAX_PATCH_BYTES)}`);
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
  // One more than may be replaced, to tell "too many" from "just enough".
  const max = MAX_REPLACEMENTS + 1;
  let found = occurrences(original, oldText, max);
  if (found.length === 0 && original.includes("\r\n") && /(^|[^\r])\n/.test(oldText)) {
    const crlf = (s: string) => s.replace(/\r?\n/g, "\r\n");
    const retry = occurrences(original, crlf(oldText), max);
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
  const count = found.length > MAX_REPLACEMENTS ? `more than ${formatCount(MAX_REPLACEMENTS)}` : found.length;
  if (found.length > 1 && !parsed.replace_all) {
    const lines = [...new Set(linesOf(original, found))];
    throw new HeraldError(
      `old_string occurs ${count} times in ${shown} (${lines.length === 1 ? "line" : "lines"} ${listLines(lines)}); add surrounding lines to make it unique, or set replace_all to replace every one`,
      { code: "invalid_input" },
    );
  }
  if (found.length > MAX_REPLACEMENTS)
    throw new HeraldError(
      `old_string occurs ${count} times in ${shown}; patch replaces at most ${formatCount(MAX_REPLACEMENTS)} at once: make old_string more specific, or edit with a command in the terminal (sed) instead`,
      { code: "invalid_input" },
    );
  // Measured before it is built: a short old_string replaced by a long new_string everywhere multiplies.
  const updatedChars = original.length + found.length * (newText.length - oldText.length);
  if (updatedChars > MAX_PATCH_BYTES)
    throw tooLarge(`the patched ${shown} would be ${formatCount(updatedChars)} characters`);
  const pieces: string[] = [];
  let last = 0;
  for (const index of found) {
    pieces.push(original.slice(last, index), newText);
    last = index + oldText.length;
  }
  pieces.push(original.slice(last));
  const updated = pieces.join("");
  const updatedBytes = Buffer.byteLength(updated, "utf8");
  if (updatedBytes > MAX_PATCH_BYTES)
    throw tooLarge(`the patched ${shown} would be ${formatBytes(updatedBytes)}`);
  options.signal?.throwIfAborted();
  await scope.files.write(rel, Buffer.from(updated, "utf8"));
  const [firstLine] = linesOf(original, found.slice(0, 1));
  const what =
    found.length === 1 ? `1 replacement at line ${firstLine}` : `${formatCount(found.length)} replacements`;
  return `Patched ${shown}: ${what}\n${replacementSnippet(original, found, oldText, newText)}`;
}
