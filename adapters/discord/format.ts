/**
 * Markdown → Discord's Markdown, and chunking at Discord's 2,000-character limit. Discord renders
 * bold/italic/strike/code/fences/quotes/lists/masked links and `#`..`###` headings itself, so those pass
 * through; what it lacks is rewritten: tables become aligned code blocks, `####`+ headings bold lines,
 * images links, horizontal rules a line of box-drawing characters, task boxes ☐/☑, `<br>` a newline.
 * Fenced code is never touched.
 */
import { createHash } from "node:crypto";
import type { OutboundFile } from "../../core/types.js";
import { alignTable } from "../shared/markdown.js";
import { splitMarkdown } from "../shared/split.js";
import { DISCORD_MAX_CHARS, DISCORD_MAX_FILES } from "./types.js";

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const TABLE_DELIMITER = /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const TASK = /^(\s*[-*+]\s+)\[([ xX])\]\s/;

/** Splits a table row into trimmed cells (outer pipes optional, `\|` kept as a pipe). */
function cells(row: string): string[] {
  const trimmed = row
    .trim()
    .replace(/^\|/, "")
    .replace(/(?<!\\)\|$/, "");
  return trimmed.split(/(?<!\\)\|/).map((c) => plainCell(c.trim().replace(/\\\|/g, "|")));
}

/** Inline Markdown that would show literally inside a code block. */
function plainCell(text: string): string {
  return text
    .replace(/<br\s*\/?>/gi, " ")
    .replace(/\*\*(.+?)\*\*|__(.+?)__/g, "$1$2")
    .replace(/`([^`]*)`/g, "$1")
    .replace(/!?\[([^\]]*)\]\(([^)\s]+)[^)]*\)/g, (_m, label: string, url: string) => label || url);
}

/** A Markdown table as an aligned plain-text table inside a code block. */
export function renderTable(rows: string[]): string {
  const [header, , ...body] = rows;
  return ["```", alignTable([cells(header ?? ""), ...body.map(cells)]), "```"].join("\n");
}

/** Rewrites images and `<br>` in one line, leaving inline code spans alone. */
function inline(line: string): string {
  return line
    .split(/(`+[^`]*`+)/)
    .map((part, i) =>
      i % 2 === 1
        ? part
        : part
            .replace(/<br\s*\/?>/gi, "\n")
            .replace(
              /!\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g,
              (_m, alt: string, url: string) => (alt.trim() ? `[${alt.trim()}](${url})` : url),
            ),
    )
    .join("");
}

/** Markdown as Discord renders it. */
export function toDiscordMarkdown(markdown: string): string {
  const lines = markdown.replace(/\r\n?/g, "\n").split("\n");
  const out: string[] = [];
  let fence: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const f = FENCE.exec(line);
    if (fence !== undefined) {
      out.push(line);
      if (f && f[1]!.startsWith(fence) && f[2]!.trim() === "") fence = undefined;
      continue;
    }
    if (f) {
      fence = f[1]!;
      out.push(line);
      continue;
    }
    const next = lines[i + 1];
    if (line.includes("|") && next !== undefined && TABLE_DELIMITER.test(next) && next.includes("-")) {
      const rows = [line, next];
      let j = i + 2;
      while (j < lines.length && lines[j]!.includes("|") && lines[j]!.trim() !== "") rows.push(lines[j++]!);
      out.push(renderTable(rows));
      i = j - 1;
      continue;
    }
    const h = HEADING.exec(line);
    if (h) {
      const text = inline(h[2]!);
      out.push(h[1]!.length <= 3 ? `${h[1]} ${text}` : `**${text}**`);
      continue;
    }
    if (RULE.test(line)) {
      out.push("──────────");
      continue;
    }
    out.push(
      inline(
        line.replace(TASK, (_m, bullet: string, mark: string) => `${bullet}${mark === " " ? "☐" : "☑"} `),
      ),
    );
  }
  return out.join("\n");
}

/**
 * The Discord messages for a Markdown text: rendered, then split at 2,000 characters on paragraph /
 * line / word boundaries with code fences closed and reopened. Deterministic for the same input, so a
 * retry starting at chunk `i` sends the same chunks. Length is counted in UTF-16 units, which is never
 * less than Discord's count.
 */
export function formatChunks(markdown: string, maxChars = DISCORD_MAX_CHARS): string[] {
  return splitMarkdown(toDiscordMarkdown(markdown), { maxLength: maxChars });
}

/** The nonce of chunk `index` of an outbox item: ≤ 25 characters, the same on every retry. */
export function chunkNonce(idempotencyKey: string, index: number): string {
  return createHash("sha256").update(`${idempotencyKey}-${index}`).digest("hex").slice(0, 25);
}

/** One Discord message of a send: text and/or up to ten files. */
export interface Part {
  content: string;
  files: OutboundFile[];
}

/** Splits a message into Discord messages, deterministically: text chunks, files on the last one. */
export function planParts(text: string, files: OutboundFile[] = []): Part[] {
  const parts: Part[] = formatChunks(text).map((content) => ({ content, files: [] }));
  for (let i = 0; i < files.length; i += DISCORD_MAX_FILES) {
    const batch = files.slice(i, i + DISCORD_MAX_FILES);
    const last = parts[parts.length - 1];
    if (i === 0 && last) last.files = batch;
    else parts.push({ content: "", files: batch });
  }
  return parts;
}
