/**
 * The transcript: what was said, as entries, and their lines at the pane's width. Each entry's lines
 * are kept until it changes or the width does, so a frame costs the lines that changed; a reply still
 * streaming keeps the lines of its finished blocks and renders only the block being written.
 */
import stringWidth from "string-width";
import type { OutboundButton } from "../../../core/types.js";
import { type MarkdownContext, renderMarkdown } from "./markdown.js";
import { displayWidth, wrapText } from "./wrap.js";

/** One thing in the transcript. Entries are changed in place; `rev` counts the changes. */
export type Entry =
  | { kind: "user"; rev: number; text: string; files?: string[] | undefined }
  | {
      kind: "assistant";
      rev: number;
      /** The id of the message this answers (events name it). */
      id?: string | undefined;
      text: string;
      streaming: boolean;
      /** Choices offered under it; `answer` is the one taken (or what was typed instead). */
      buttons?: OutboundButton[][] | undefined;
      answer?: string | undefined;
      stopped?: boolean | undefined;
    }
  | {
      kind: "tool";
      rev: number;
      id?: string | undefined;
      /** A call's id; none for a running tool's own status line. */
      callId?: string | undefined;
      line: string;
      /** `past`: a call of a stored session (how it went is not shown). */
      state: "running" | "ok" | "failed" | "past";
      durationMs?: number | undefined;
      result?: string | undefined;
    }
  | { kind: "notice"; rev: number; text: string }
  | { kind: "error"; rev: number; text: string };

/** What rendering an entry depends on besides the entry. */
export interface RenderContext extends MarkdownContext {
  /** Tool calls show the start of their output (Ctrl+O). */
  expanded: boolean;
}

interface Cached {
  rev: number;
  width: number;
  expanded: boolean;
  color: boolean;
  lines: string[];
  /** A streaming reply: the end of its finished blocks in `text`, and their lines. */
  stableEnd?: number;
  stableLines?: string[];
}

/** The lines the pane shows and how many are above and below them. */
export interface TranscriptWindow {
  lines: string[];
  above: number;
  below: number;
}

/** Entries and their cached lines. */
export class Transcript {
  entries: Entry[] = [];
  private cache = new WeakMap<Entry, Cached>();
  /** Lines rendered by the last `window` (the benchmark's count). */
  rendered = 0;
  private lastTotal = 0;

  /** Forgets every entry's lines (the highlighter became ready). */
  invalidate(): void {
    this.cache = new WeakMap();
  }

  /**
   * The `height` lines ending `scroll` lines above the bottom (scroll is clamped to what there is).
   * `prompt`: the entry whose choices are open and the selected one.
   */
  window(width: number, height: number, scroll: number, ctx: RenderContext): TranscriptWindow {
    const all: string[] = [];
    this.rendered = 0;
    let previous: Entry | undefined;
    for (const entry of this.entries) {
      if (previous && gapBetween(previous, entry)) all.push("");
      for (const line of this.linesOf(entry, width, ctx)) all.push(line);
      previous = entry;
    }
    // Scrolled up, the reader keeps their place while lines are added below.
    const grown = scroll > 0 ? Math.max(0, all.length - this.lastTotal) : 0;
    this.lastTotal = all.length;
    const below = Math.max(0, Math.min(scroll + grown, all.length - height));
    const end = all.length - below;
    const start = Math.max(0, end - height);
    return { lines: all.slice(start, end), above: start, below };
  }

  private linesOf(entry: Entry, width: number, ctx: RenderContext): string[] {
    const hit = this.cache.get(entry);
    const expanded = entry.kind === "tool" && ctx.expanded;
    if (
      hit &&
      hit.rev === entry.rev &&
      hit.width === width &&
      hit.expanded === expanded &&
      hit.color === ctx.theme.color
    )
      return hit.lines;
    const cached: Cached =
      hit && hit.width === width && hit.color === ctx.theme.color
        ? hit
        : { rev: -1, width, expanded, color: ctx.theme.color, lines: [] };
    cached.rev = entry.rev;
    cached.expanded = expanded;
    cached.lines = renderEntry(entry, width, ctx, cached);
    this.rendered += cached.lines.length;
    this.cache.set(entry, cached);
    return cached.lines;
  }
}

/** A blank line before each message of the user, and between tool lines and the text after them. */
function gapBetween(a: Entry, b: Entry): boolean {
  if (b.kind === "user") return true;
  if (a.kind === "user") return false;
  return (a.kind === "tool") !== (b.kind === "tool");
}

const INDENT = "  ";

function renderEntry(entry: Entry, width: number, ctx: RenderContext, cached: Cached): string[] {
  const { theme } = ctx;
  const inner = Math.max(10, width - INDENT.length);
  switch (entry.kind) {
    case "user": {
      const lines = wrapText(entry.text, inner, false).map((l, i) =>
        i === 0 ? theme.accent("› ") + theme.bold(l) : INDENT + theme.bold(l),
      );
      for (const file of entry.files ?? []) lines.push(theme.dim(`${INDENT}+ ${file}`));
      return lines;
    }
    case "assistant": {
      const lines = (
        entry.streaming ? streamingLines(entry.text, inner, ctx, cached) : markdown(entry.text, inner, ctx)
      ).map((l) => INDENT + l);
      if (entry.stopped) lines.push(theme.dim(`${INDENT}⏹ stopped`));
      if (entry.buttons && entry.answer !== undefined) lines.push(theme.dim(`${INDENT}→ ${entry.answer}`));
      return lines;
    }
    case "tool":
      return toolLines(entry, width, ctx);
    case "notice":
      return wrapText(entry.text, inner).map((l) => INDENT + theme.dim(l));
    case "error":
      return wrapText(entry.text, inner).map((l, i) => (i === 0 ? theme.fail("✗ ") : INDENT) + theme.fail(l));
  }
}

function markdown(text: string, width: number, ctx: MarkdownContext): string[] {
  return text ? renderMarkdown(text, width, ctx) : [];
}

/**
 * A reply being written: its finished blocks (up to the last blank line outside a code fence) are
 * rendered once and kept; only the rest is rendered again.
 */
function streamingLines(text: string, width: number, ctx: MarkdownContext, cached: Cached): string[] {
  let stableEnd = cached.stableEnd ?? 0;
  let stable = cached.stableLines ?? [];
  if (stableEnd > text.length) {
    stableEnd = 0;
    stable = [];
  }
  const boundary = lastBoundary(text, stableEnd);
  if (boundary > stableEnd) {
    stable = join(stable, markdown(text.slice(stableEnd, boundary), width, ctx));
    stableEnd = boundary;
  }
  cached.stableEnd = stableEnd;
  cached.stableLines = stable;
  return join(stable, markdown(text.slice(stableEnd), width, ctx));
}

/** The end of the last blank line after `from` that is outside a code fence (`from` when none). */
function lastBoundary(text: string, from: number): number {
  let fenced = false;
  let boundary = from;
  let at = from;
  while (at < text.length) {
    const nl = text.indexOf("\n", at);
    if (nl < 0) break;
    const line = text.slice(at, nl);
    if (/^ {0,3}(```|~~~)/.test(line)) fenced = !fenced;
    else if (!fenced && line.trim() === "" && at > from) boundary = nl + 1;
    at = nl + 1;
  }
  return boundary;
}

function join(a: string[], b: string[]): string[] {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  return [...a, "", ...b];
}

function toolLines(entry: Extract<Entry, { kind: "tool" }>, width: number, ctx: RenderContext): string[] {
  const { theme } = ctx;
  if (entry.callId === undefined) return [theme.dim(clip(`${INDENT}  ↳ ${entry.line}`, width))];
  const outcome =
    entry.state === "past"
      ? ""
      : entry.state === "running"
        ? theme.dim(" …")
        : ` ${theme.dim("·")} ${outcomeStyle(entry, theme)(outcomeOf(entry))}${
            entry.durationMs !== undefined ? theme.dim(` · ${duration(entry.durationMs)}`) : ""
          }`;
  const marker = ctx.expanded ? "▾ " : "▸ ";
  const suffixWidth = stringWidth(outcome);
  const head = INDENT + theme.dim(marker) + clip(entry.line, Math.max(8, width - 4 - suffixWidth));
  const lines = [head + outcome];
  if (ctx.expanded && entry.result) {
    for (const line of entry.result.trimEnd().split("\n"))
      for (const part of wrapText(line, Math.max(10, width - 6), false))
        lines.push(theme.dim(`      ${part}`));
  }
  return lines;
}

/** "exit 0" for a command's result, "waiting for approval" for a held one, else "ok" or "failed". */
function outcomeOf(entry: { state: string; result?: string | undefined }): string {
  const result = entry.result ?? "";
  const exit = /^exit code (-?\d+)/.exec(result);
  if (exit) return `exit ${exit[1]}`;
  if (result.startsWith("not run yet")) return "waiting for approval";
  if (result.startsWith("not run")) return "not run";
  return entry.state === "ok" ? "ok" : "failed";
}

function outcomeStyle(entry: { state: string; result?: string | undefined }, theme: RenderContext["theme"]) {
  if (entry.result?.startsWith("not run")) return theme.warn;
  return entry.state === "ok" && !/^exit code [1-9]/.test(entry.result ?? "") ? theme.ok : theme.fail;
}

/** "120 ms", "1.2 s". */
export function duration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** Plain `text` on one line, cut to `width` columns with an ellipsis. */
export function clip(text: string, width: number): string {
  const one = text.replace(/\s*\n\s*/g, " ");
  if (displayWidth(one) <= width) return one;
  let out = "";
  let cols = 0;
  for (const ch of one) {
    const w = displayWidth(ch);
    if (cols + w > width - 1) break;
    out += ch;
    cols += w;
  }
  return `${out}…`;
}
