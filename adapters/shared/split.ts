/**
 * Splits Markdown into chunks that each fit a platform's message limit, on the best boundary available
 * (paragraph, then line, then word, then character), never inside a surrogate pair, and keeping code
 * fences valid: a chunk that ends inside a fenced block closes it, and the next one reopens it with the
 * same language.
 */

export interface SplitOptions {
  /** The platform's limit, in the unit `measure` counts. */
  maxLength: number;
  /**
   * Measures a chunk as the platform will count it, e.g. the UTF-16 length of its rendered HTML.
   * Must grow (weakly) with the text. @defaultValue UTF-16 length (`s.length`)
   */
  measure?: (chunk: string) => number;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;

/** The opening fence line in force at the end of `text`, or undefined outside a code block. */
export function openFenceAtEnd(text: string, initial?: string): string | undefined {
  let open = initial;
  for (const line of text.split("\n")) {
    const m = FENCE.exec(line);
    if (!m) continue;
    if (open === undefined) {
      open = line.trim();
    } else {
      const marker = fenceMarker(open);
      // A closing fence uses the same character, at least as long, with nothing after it.
      if (m[1]!.startsWith(marker) && m[2]!.trim() === "") open = undefined;
    }
  }
  return open;
}

function fenceMarker(openLine: string): string {
  return /^(`{3,}|~{3,})/.exec(openLine)?.[1] ?? "```";
}

/** Is `i` between the two halves of a surrogate pair? */
function insidePair(text: string, i: number): boolean {
  if (i <= 0 || i >= text.length) return false;
  const prev = text.charCodeAt(i - 1);
  return prev >= 0xd800 && prev <= 0xdbff;
}

interface Piece {
  chunk: string;
  /** Where the next chunk starts in the remaining text. */
  next: number;
  /** Fence open at the cut (reopened at the start of the next chunk). */
  fence: string | undefined;
}

function assemble(
  prefixFence: string | undefined,
  body: string,
): { chunk: string; fence: string | undefined } {
  const fence = openFenceAtEnd(body, prefixFence);
  const head = prefixFence ? `${prefixFence}\n` : "";
  const tail = fence ? `${body.endsWith("\n") ? "" : "\n"}${fenceMarker(fence)}` : "";
  return { chunk: head + body + tail, fence };
}

/**
 * Splits `text` into chunks no longer than `maxLength` by `measure`. A text that fits is returned as
 * one chunk. Empty input gives no chunks.
 */
export function splitMarkdown(text: string, options: SplitOptions): string[] {
  const measure = options.measure ?? ((s: string) => s.length);
  const max = options.maxLength;
  const chunks: string[] = [];
  let rest = text.replace(/\s+$/, "");
  let fence: string | undefined;

  while (rest.length > 0) {
    const whole = assemble(fence, rest);
    if (measure(whole.chunk) <= max) {
      chunks.push(whole.chunk);
      break;
    }
    const piece = cut(rest, fence, max, measure);
    chunks.push(piece.chunk);
    fence = piece.fence;
    rest = rest.slice(piece.next).replace(/^\n+/, "");
    if (!fence) rest = rest.replace(/^[ \t]+/, "");
  }
  return chunks.filter((c) => c.trim().length > 0);
}

function cut(rest: string, fence: string | undefined, max: number, measure: (s: string) => number): Piece {
  // The longest prefix that fits, by binary search (measure grows with length).
  let lo = 1;
  let hi = rest.length;
  let fit = 0;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (measure(assemble(fence, rest.slice(0, mid)).chunk) <= max) {
      fit = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  if (fit === 0) {
    // Not even one character fits next to the fence lines: drop the fence for this chunk.
    const single = insidePair(rest, 1) ? 2 : 1;
    return { chunk: rest.slice(0, single), next: single, fence };
  }
  const window = rest.slice(0, fit);
  const minUseful = Math.floor(fit * 0.4);
  let at = boundaryAt(window, fence, minUseful, true);
  if (at < 0) at = boundaryAt(window, fence, minUseful, false);
  if (at < 0) {
    at = fit;
    if (insidePair(rest, at)) at -= 1;
  }
  const body = rest.slice(0, at).replace(/\s+$/, "");
  const { chunk, fence: open } = assemble(fence, body);
  return { chunk, next: at, fence: open };
}

/** How many earlier candidates of one boundary kind to try before settling for a worse kind. */
const MAX_CANDIDATES = 64;

/**
 * The best cut in `window`: the last paragraph break, else line break, else space, at or after
 * `minUseful`. With `avoidSpans`, a cut that would leave an inline span open (`code`, **bold**, ~~strike~~,
 * *italic*, [link text]) is skipped, so both halves still render as formatted text.
 */
function boundaryAt(
  window: string,
  fence: string | undefined,
  minUseful: number,
  avoidSpans: boolean,
): number {
  for (const boundary of ["\n\n", "\n", " "]) {
    let i = window.lastIndexOf(boundary);
    for (let tries = 0; i >= minUseful && i > 0 && tries < MAX_CANDIDATES; tries++) {
      if (!avoidSpans || boundary === "\n\n" || !insideInlineSpan(window, i, fence)) return i;
      i = window.lastIndexOf(boundary, i - 1);
    }
  }
  return -1;
}

/** Would cutting `text` at `i` split an inline span? Code blocks are safe (the fence is reopened). */
function insideInlineSpan(text: string, i: number, fence: string | undefined): boolean {
  const before = text.slice(0, i);
  if (openFenceAtEnd(before, fence) !== undefined) return false;
  // Spans never cross a blank line or a fence line: look only at the paragraph the cut is in.
  const fenceLine = [...before.matchAll(/^ {0,3}(`{3,}|~{3,}).*$/gm)].pop();
  const fenceEnd = fenceLine ? fenceLine.index + fenceLine[0].length : 0;
  const paragraph = before.slice(Math.max(before.lastIndexOf("\n\n") + 1, fenceEnd));
  if ((paragraph.match(/`/g)?.length ?? 0) % 2 === 1) return true;
  const prose = paragraph.replace(/`[^`]*`/g, "").replace(/^[ \t]*[*+-][ \t]/gm, "");
  const count = (re: RegExp) => prose.match(re)?.length ?? 0;
  if (count(/\*\*/g) % 2 === 1 || count(/~~/g) % 2 === 1) return true;
  if (count(/(?<!\*)\*(?!\*)/g) % 2 === 1) return true;
  return count(/\[/g) > count(/\]/g);
}

/** UTF-16 length, the unit Telegram and JavaScript count in (an emoji outside the BMP counts 2). */
export const utf16Length = (s: string): number => s.length;
