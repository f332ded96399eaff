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
  // The next line break not yet counted: each is looked for once, however many indices share a line.
  let nl = text.indexOf("\n");
  for (const index of indices) {
    for (; nl >= 0 && nl < index; nl = text.indexOf("\n", nl + 1)) line++;
    out.push(line);
  }
  return out;
}

/** The whole lines one or more overlapping matches touch: characters `start` to `end` (its last "\n" or the end). */
interface Block {
  start: number;
  end: number;
  indices: number[];
  /** Lines of the block, first and last (1-based). */
  first: number;
  last: number;
}

/** Newlines in `text` from `from` up to (not including) `to`. */
function newlinesBetween(text: string, from: number, to: number): number {
  let count = 0;
  for (let nl = text.indexOf("\n", from); nl >= 0 && nl < to; nl = text.indexOf("\n", nl + 1)) count++;
  return count;
}

/** Up to `count` whole lines of `text` right before the line starting at `start`, in order. */
function linesBefore(text: string, start: number, count: number): string[] {
  const out: string[] = [];
  for (let end = start - 1; out.length < count && end >= 0; ) {
    const from = end > 0 ? text.lastIndexOf("\n", end - 1) + 1 : 0;
    out.unshift(text.slice(from, end));
    end = from - 1;
  }
  return out;
}

/** Up to `count` whole lines of `text` right after the line ending at `end` (a "\n" or the end). */
function linesAfter(text: string, end: number, count: number): string[] {
  const out: string[] = [];
  for (let from = end + 1; out.length < count && from < text.length; ) {
    const nl = text.indexOf("\n", from);
    const to = nl < 0 ? text.length : nl;
    out.push(text.slice(from, to));
    from = to + 1;
  }
  return out;
}

/**
 * Hunks for replacing `oldText` by `newText` at each of `indices` in `original` (ascending, not
 * overlapping): `@@ -a,b +c,d @@`, two lines of context, `-` old lines and `+` new lines; changes close
 * enough to share context share a hunk. At most five hunks and about 4,000 characters; the rest is
 * counted, not shown. Only the lines shown are cut out of `original`: a large file costs no more.
 */
export function replacementSnippet(
  original: string,
  indices: number[],
  oldText: string,
  newText: string,
): string {
  const blocks: Block[] = [];
  for (const index of indices) {
    const start = original.lastIndexOf("\n", index - 1) + 1;
    const nl = original.indexOf("\n", index + oldText.length);
    const end = nl < 0 ? original.length : nl;
    const prev = blocks[blocks.length - 1];
    if (prev && start <= prev.end) {
      prev.end = Math.max(prev.end, end);
      prev.indices.push(index);
    } else blocks.push({ start, end, indices: [index], first: 0, last: 0 });
  }
  const firstLines = linesOf(
    original,
    blocks.map((b) => b.start),
  );
  for (const [k, block] of blocks.entries()) {
    block.first = firstLines[k] ?? 1;
    block.last = block.first + newlinesBetween(original, block.start, block.end);
  }
  // Blocks whose context would touch share a hunk.
  const hunkGroups: Block[][] = [];
  for (const block of blocks) {
    const group = hunkGroups[hunkGroups.length - 1];
    const prev = group?.[group.length - 1];
    if (group && prev && block.first - prev.last <= 2 * CONTEXT_LINES + 1) group.push(block);
    else hunkGroups.push([block]);
  }
  const hunks: string[] = [];
  let delta = 0;
  for (const group of hunkGroups.slice(0, MAX_HUNKS)) {
    const head = group[0] as Block;
    const tail = group[group.length - 1] as Block;
    const above = linesBefore(original, head.start, CONTEXT_LINES);
    const below = linesAfter(original, tail.end, CONTEXT_LINES);
    const body: string[] = above.map((l) => ` ${clip(l)}`);
    let oldCount = above.length + below.length;
    let newCount = oldCount;
    for (const [j, block] of group.entries()) {
      const prev = group[j - 1];
      if (prev && block.first > prev.last + 1) {
        const between = original.slice(prev.end + 1, block.start - 1).split("\n");
        body.push(...between.map((l) => ` ${clip(l)}`));
        oldCount += between.length;
        newCount += between.length;
      }
      const pieces: string[] = [];
      let last = block.start;
      for (const index of block.indices) {
        pieces.push(original.slice(last, index), newText);
        last = index + oldText.length;
      }
      pieces.push(original.slice(last, block.end));
      const before = original.slice(block.start, block.end).split("\n");
      const after = pieces.join("").split("\n");
      body.push(...before.map((l) => `-${clip(l)}`), ...after.map((l) => `+${clip(l)}`));
      oldCount += before.length;
      newCount += after.length;
    }
    body.push(...below.map((l) => ` ${clip(l)}`));
    const ctxFrom = head.first - above.length;
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
