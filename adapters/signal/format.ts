/**
 * Replies for Signal: Signal renders no Markdown, but it has text styles (bold, italic, strikethrough,
 * monospace) as ranges beside the text, which signal-cli takes as `textStyle: ["start:length:STYLE"]`
 * (UTF-16 offsets, as Java and JavaScript count). The Markdown is split into messages of at most
 * `SIGNAL_MAX_CHARS` first; each chunk then loses its markers and gets their ranges. Headings become
 * bold lines, links show their address, code blocks are monospace.
 */
import { splitMarkdown } from "../shared/split.js";

/**
 * Characters per message. Signal sends longer texts as a "long message" attachment that some clients
 * show collapsed; 2000 keeps each reply inline.
 */
export const SIGNAL_MAX_CHARS = 2000;

/** One message: plain text and its style ranges. */
export interface SignalChunk {
  text: string;
  /** `start:length:STYLE`, as signal-cli's `--text-style`. */
  styles: string[];
}

type Style = "BOLD" | "ITALIC" | "STRIKETHROUGH" | "MONOSPACE";

const INLINE: [RegExp, Style][] = [
  [/`([^`\n]+)`/, "MONOSPACE"],
  [/\*\*(?=\S)(.+?)(?<=\S)\*\*/, "BOLD"],
  [/__(?=\S)(.+?)(?<=\S)__/, "BOLD"],
  [/~~(?=\S)(.+?)(?<=\S)~~/, "STRIKETHROUGH"],
  [/(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])/, "ITALIC"],
  [/(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])/, "ITALIC"],
];

/** One line's inline Markdown → text and ranges (offsets from the line's start). */
function inline(line: string): { text: string; ranges: [number, number, Style][] } {
  const linked = line.replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_, label: string, href: string) =>
    label === href ? href : `${label} (${href})`,
  );
  let text = "";
  const ranges: [number, number, Style][] = [];
  let rest = linked;
  while (rest) {
    let best: { index: number; match: RegExpExecArray; style: Style } | undefined;
    for (const [pattern, style] of INLINE) {
      const match = pattern.exec(rest);
      if (match && (!best || match.index < best.index)) best = { index: match.index, match, style };
    }
    if (!best) {
      text += rest;
      break;
    }
    text += rest.slice(0, best.index);
    const inner = best.match[1]!;
    // Code keeps what is inside it; other styles may nest (bold inside italic…).
    const nested = best.style === "MONOSPACE" ? { text: inner, ranges: [] } : inline(inner);
    const start = text.length;
    ranges.push([start, nested.text.length, best.style]);
    for (const [s, l, st] of nested.ranges) ranges.push([start + s, l, st]);
    text += nested.text;
    rest = rest.slice(best.index + best.match[0].length);
  }
  return { text, ranges };
}

/** A chunk of Markdown → its Signal text and styles. */
export function styledChunk(markdown: string): SignalChunk {
  const lines: string[] = [];
  const styles: string[] = [];
  let offset = 0;
  let fenced = false;
  for (const raw of markdown.split("\n")) {
    if (/^ {0,3}(```|~~~)/.test(raw)) {
      fenced = !fenced;
      continue;
    }
    let line: string;
    const ranges: [number, number, Style][] = [];
    if (fenced) {
      line = raw;
      if (line) ranges.push([0, line.length, "MONOSPACE"]);
    } else {
      const heading = /^#{1,6}\s+(.*)$/.exec(raw);
      const parsed = inline(heading ? heading[1]! : raw);
      line = parsed.text;
      ranges.push(...parsed.ranges);
      if (heading && line) ranges.push([0, line.length, "BOLD"]);
    }
    for (const [s, l, st] of ranges) if (l > 0) styles.push(`${offset + s}:${l}:${st}`);
    lines.push(line);
    offset += line.length + 1;
  }
  return { text: lines.join("\n"), styles };
}

/** The messages one reply becomes, in order. */
export function signalChunks(markdown: string): SignalChunk[] {
  return splitMarkdown(markdown, { maxLength: SIGNAL_MAX_CHARS }).map(styledChunk);
}
