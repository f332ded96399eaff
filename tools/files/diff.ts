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

/** The whole lines one or more overlapping matches touch. */
interface Block {
  start: number;
  end: number;
  indices: number[];
}

/**
 * Hunks for replacing `oldText` by `newText` at each of `indices` in `original` (ascending, not
 * overlapping): `@@ -a,b +c,d @@`, two lines of context, `-` old lines and `+` new lines; changes close
 * enough to share context share a hunk. At most five hunks and about 4,000 characters; the rest is
 * counted, not shown.
 */
export function replacementSnippet(
  original: string,
  indices: number[],
  oldText: string,
  newText: string,
): string {
  const lines = original.split("\n");
  if (original.endsWith("\n")) lines.pop();
  const blocks: Block[] = [];
  for (const index of indices) {
    const start = original.lastIndexOf("\n", index - 1) + 1;
    const nl = original.indexOf("\n", index + oldText.length);
    const end = nl < 0 ? original.length : nl;
    const prev = blocks[blocks.length - 1];
    if (prev && start <= prev.end) {
      prev.end = Math.max(prev.end, end);
      prev.indices.push(index);
    } else blocks.push({ start, end, indices: [index] });
  }
  const firstLines = linesOf(
    original,
    blocks.map((b) => b.start),
  );
  const rendered = blocks.map((block, k) => {
    let replaced = "";
    let last = block.start;
    for (const index of block.indices) {
      replaced += original.slice(last, index) + newText;
      last = index + oldText.length;
    }
    replaced += original.slice(last, block.end);
    const before = original.slice(block.start, block.end).split("\n");
    const first = firstLines[k] ?? 1;
    return { first, last: first + before.length - 1, before, after: replaced.split("\n") };
  });
  // Blocks whose context would touch share a hunk.
  const hunkGroups: (typeof rendered)[] = [];
  for (const block of rendered) {
    const group = hunkGroups[hunkGroups.length - 1];
    const prev = group?.[group.length - 1];
    if (group && prev && block.first - prev.last <= 2 * CONTEXT_LINES + 1) group.push(block);
    else hunkGroups.push([block]);
  }
  const hunks: string[] = [];
  let delta = 0;
  for (const [k, group] of hunkGroups.entries()) {
    const head = group[0] as (typeof rendered)[number];
    const tailBlock = group[group.length - 1] as (typeof rendered)[number];
    const ctxFrom = Math.max(1, head.first - CONTEXT_LINES);
    const ctxTo = Math.min(lines.length, tailBlock.last + CONTEXT_LINES);
    const body: string[] = [];
    let oldCount = 0;
    let newCount = 0;
    let line = ctxFrom;
    for (const block of group) {
      for (; line < block.first; line++, oldCount++, newCount++) body.push(` ${clip(lines[line - 1] ?? "")}`);
      body.push(...block.before.map((l) => `-${clip(l)}`), ...block.after.map((l) => `+${clip(l)}`));
      oldCount += block.before.length;
      newCount += block.after.length;
      line = block.last + 1;
    }
    for (; line <= ctxTo; line++, oldCount++, newCount++) body.push(` ${clip(lines[line - 1] ?? "")}`);
    if (k < MAX_HUNKS)
      hunks.push([`@@ -${ctxFrom},${oldCount} +${ctxFrom + delta},${newCount} @@`, ...body].join("\n"));
    delta += newCount - oldCount;
  }
  let snippet = hunks.join("\n");
  if (snippet.length > MAX_SNIPPET_CHARS)
    snippet = `${snippet.slice(0, MAX_SNIPPET_CHARS)}\n… diff cut: ${formatCount(snippet.length - MAX_SNIPPET_CHARS)} more characters`;
  if (hunkGroups.length > MAX_HUNKS)
    snippet += `\n… ${formatCount(hunkGroups.length - MAX_HUNKS)} more hunks not shown`;
  return snippet;
}
