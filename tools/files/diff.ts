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

/** 1-based line of each of `indices` (ascending character positions) in `text`, in one pass. */
export function linesOf(text: string, indices: number[]): number[] {
  const out: number[] = [];
  let line = 1;
  let pos = 0;
  for (const index of indices) {
    for (let nl = text.indexOf("\n", pos); nl >= 0 && nl < index; nl = text.indexOf("\n", nl + 1)) {
      line++;
      pos = nl + 1;
    }
    out.push(line);
  }
  return out;
}

interface Group {
  /** Character range of the whole lines the group's matches touch. */
  start: number;
  end: number;
  indices: number[];
}

/**
 * Hunks for replacing `oldText` by `newText` at each of `indices` in `original` (ascending, not
 * overlapping): `@@ -a,b +c,d @@`, two lines of context, `-` old lines and `+` new lines; matches whose
 * hunks would touch share one. At most five hunks and about 4,000 characters; the rest is counted.
 */
export function replacementSnippet(
  original: string,
  indices: number[],
  oldText: string,
  newText: string,
): string {
  const lines = original.split("\n");
  if (original.endsWith("\n")) lines.pop();
  const groups: Group[] = [];
  for (const index of indices) {
    const start = original.lastIndexOf("\n", index - 1) + 1;
    const nl = original.indexOf("\n", index + oldText.length);
    const end = nl < 0 ? original.length : nl;
    const prev = groups[groups.length - 1];
    const gapLines = prev ? original.slice(prev.end, start).split("\n").length - 1 : Number.POSITIVE_INFINITY;
    if (prev && gapLines <= 2 * CONTEXT_LINES + 1) {
      prev.end = Math.max(prev.end, end);
      prev.indices.push(index);
    } else groups.push({ start, end, indices: [index] });
  }
  const firstLines = linesOf(
    original,
    groups.map((g) => g.start),
  );
  const hunks: string[] = [];
  let delta = 0;
  for (const [k, group] of groups.entries()) {
    const region = original.slice(group.start, group.end);
    let replaced = "";
    let last = group.start;
    for (const index of group.indices) {
      replaced += original.slice(last, index) + newText;
      last = index + oldText.length;
    }
    replaced += original.slice(last, group.end);
    const before = region.split("\n");
    const after = replaced.split("\n");
    const first = firstLines[k] ?? 1;
    if (k < MAX_HUNKS) {
      const ctxFrom = Math.max(1, first - CONTEXT_LINES);
      const lastLine = first + before.length - 1;
      const head = lines.slice(ctxFrom - 1, first - 1);
      const tail = lines.slice(lastLine, Math.min(lines.length, lastLine + CONTEXT_LINES));
      hunks.push(
        [
          `@@ -${ctxFrom},${head.length + before.length + tail.length} +${ctxFrom + delta},${head.length + after.length + tail.length} @@`,
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
  if (groups.length > MAX_HUNKS)
    snippet += `\n… ${formatCount(groups.length - MAX_HUNKS)} more hunks not shown`;
  return snippet;
}
