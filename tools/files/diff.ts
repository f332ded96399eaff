/** A short unified-diff-like view of replacements, for the model to check its edit. */
import { formatCount } from "./common.js";

const CONTEXT_LINES = 2;
const MAX_HUNKS = 5;
const MAX_LINE_CHARS = 300;
const MAX_SNIPPET_CHARS = 4000;

function clip(line: string): string {
  const text = line.endsWith("\r") ? line.slice(0, -1) : line;
  return text.length > MAX_LINE_CHARS ? `${text.slice(0, MAX_LINE_CHARS)} …` : text;
}

/** 1-based line of character `index`. */
export function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i >= 0 && i < index; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

/**
 * Hunks for replacing `oldText` by `newText` at each of `indices` in `original` (ascending, not
 * overlapping): `@@ -a,b +c,d @@`, two lines of context, `-` old lines and `+` new lines. At most five
 * hunks and about 4,000 characters; the rest is counted, not shown.
 */
export function replacementSnippet(
  original: string,
  indices: number[],
  oldText: string,
  newText: string,
): string {
  const lines = original.split("\n");
  const hunks: string[] = [];
  let delta = 0;
  for (const [k, index] of indices.entries()) {
    const lineStart = original.lastIndexOf("\n", index - 1) + 1;
    const endNl = original.indexOf("\n", index + oldText.length);
    const lineEnd = endNl < 0 ? original.length : endNl;
    const before = original.slice(lineStart, lineEnd).split("\n");
    const after = (
      original.slice(lineStart, index) +
      newText +
      original.slice(index + oldText.length, lineEnd)
    ).split("\n");
    const first = lineOf(original, lineStart);
    if (k < MAX_HUNKS) {
      const ctxFrom = Math.max(1, first - CONTEXT_LINES);
      const last = first + before.length - 1;
      const ctxTo = Math.min(lines.length, last + CONTEXT_LINES);
      const head = lines.slice(ctxFrom - 1, first - 1);
      const tail = lines.slice(last, ctxTo);
      const oldCount = head.length + before.length + tail.length;
      const newCount = head.length + after.length + tail.length;
      hunks.push(
        [
          `@@ -${ctxFrom},${oldCount} +${ctxFrom + delta},${newCount} @@`,
          ...head.map((l) => ` ${clip(l)}`),
          ...before.map((l) => `-${clip(l)}`),
          ...after.map((l) => `+${clip(l)}`),
          ...tail.map((l) => ` ${clip(l)}`),
        ].join("\n"),
      );
    }
    delta += after.length - before.length;
  }
  let snippet = hunks.join("\n");
  if (snippet.length > MAX_SNIPPET_CHARS)
    snippet = `${snippet.slice(0, MAX_SNIPPET_CHARS)}\n… diff cut: ${formatCount(snippet.length - MAX_SNIPPET_CHARS)} more characters`;
  if (indices.length > MAX_HUNKS)
    snippet += `\n… ${formatCount(indices.length - MAX_HUNKS)} more replacements not shown`;
  return snippet;
}
