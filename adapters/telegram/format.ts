/**
 * The model's Markdown → Telegram's HTML parse mode, and chunking to Telegram's 4096-unit limit.
 * Bold, italic, strikethrough, inline code, code blocks with their language, links, lists (bullets and
 * numbers as text), quotes, headings as bold, tables as preformatted text. Everything else is escaped
 * text, so the output always parses.
 */
import { Lexer, type Token, type Tokens } from "marked";
import { alignTable, decodeCharacterRefs, plainTextList, tablesAsCode } from "../shared/markdown.js";
import { splitMarkdown } from "../shared/split.js";

/** Telegram's limit for a message text, in UTF-16 code units after entity parsing. */
export const TELEGRAM_MAX_CHARS = 4096;
/** Telegram's limit for a media caption. */
export const TELEGRAM_MAX_CAPTION_CHARS = 1024;

/** One message's worth of a reply: the HTML to send and the plain text to send if Telegram rejects it. */
export interface TelegramChunk {
  html: string;
  plain: string;
}

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" };

/** Escapes text for Telegram HTML (also safe inside a double-quoted attribute). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => HTML_ESCAPES[c]!);
}

const NAMED_REFS: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"' };

/** The text Telegram will show for `html` (tags dropped, entities resolved). */
export function htmlToVisible(html: string): string {
  return html.replace(/<[^>]*>/g, "").replace(/&(lt|gt|amp|quot);/g, (_, n: string) => NAMED_REFS[n]!);
}

const SAFE_LINK = /^(https?:|tg:|mailto:)/i;

function inline(tokens: Token[] | undefined): string {
  let out = "";
  for (const token of tokens ?? []) out += inlineToken(token);
  return out;
}

function inlineToken(token: Token): string {
  const t = token as Tokens.Generic;
  switch (token.type) {
    case "strong":
      return `<b>${inline(t.tokens)}</b>`;
    case "em":
      return `<i>${inline(t.tokens)}</i>`;
    case "del":
      return `<s>${inline(t.tokens)}</s>`;
    case "codespan":
      return `<code>${escapeHtml(t["text"] as string)}</code>`;
    case "br":
      return "\n";
    case "link": {
      const label = inline(t.tokens);
      const href = t["href"] as string;
      return SAFE_LINK.test(href) ? `<a href="${escapeHtml(href)}">${label}</a>` : label;
    }
    case "image": {
      const href = t["href"] as string;
      const label = escapeHtml((t["text"] as string) || href);
      return SAFE_LINK.test(href) ? `<a href="${escapeHtml(href)}">${label}</a>` : label;
    }
    case "escape":
      return escapeHtml(t["text"] as string);
    case "text":
      return t.tokens ? inline(t.tokens) : escapeHtml(decodeCharacterRefs(t["text"] as string));
    default:
      // Inline HTML and anything unknown: shown as written.
      return escapeHtml(t.raw);
  }
}

/** Plain text of inline tokens (table cells). */
function plainInline(tokens: Token[] | undefined): string {
  return htmlToVisible(inline(tokens));
}

/** A table as aligned monospace text. */
function tableText(table: Tokens.Table): string {
  const rows = [table.header, ...table.rows].map((row) => row.map((cell) => plainInline(cell.tokens)));
  return alignTable(rows, table.align);
}

interface BlockContext {
  inQuote: boolean;
  depth: number;
}

function blocks(tokens: Token[], ctx: BlockContext, separator = "\n\n"): string {
  return tokens
    .map((t) => block(t, ctx))
    .filter((s) => s.length > 0)
    .join(separator);
}

function list(token: Tokens.List, ctx: BlockContext): string {
  return plainTextList(token, ctx.depth, (tokens, separator) =>
    blocks(tokens, { ...ctx, depth: ctx.depth + 1 }, separator),
  );
}

function block(token: Token, ctx: BlockContext): string {
  const t = token as Tokens.Generic;
  switch (token.type) {
    case "space":
    case "def":
      return "";
    case "paragraph":
    case "text":
      return t.tokens ? inline(t.tokens) : escapeHtml(decodeCharacterRefs(t["text"] as string));
    case "heading":
      return `<b>${inline(t.tokens)}</b>`;
    case "code": {
      const lang = /^[\w+#.-]+/.exec((t["lang"] as string | undefined) ?? "")?.[0];
      const code = escapeHtml((t["text"] as string).replace(/\n+$/, ""));
      return lang ? `<pre><code class="language-${lang}">${code}</code></pre>` : `<pre>${code}</pre>`;
    }
    case "blockquote": {
      // Telegram does not nest quotes: an inner quote is part of the outer one.
      const inner = blocks(t.tokens ?? [], { ...ctx, inQuote: true });
      return ctx.inQuote ? inner : `<blockquote>${inner}</blockquote>`;
    }
    case "list":
      return list(token as Tokens.List, ctx);
    case "table":
      return `<pre>${escapeHtml(tableText(token as Tokens.Table))}</pre>`;
    case "hr":
      return "——————";
    default:
      return escapeHtml(t.raw.trim());
  }
}

const lexer = () => new Lexer({ gfm: true });

/** Renders Markdown as Telegram HTML. */
export function markdownToHtml(markdown: string): string {
  return blocks(lexer().lex(markdown), { inQuote: false, depth: 0 }).trim();
}

/**
 * Splits a Markdown reply into Telegram messages: each chunk's rendered text fits `maxChars` UTF-16 units
 * (what Telegram counts), cut on paragraph/line/word boundaries with code fences closed and reopened.
 * Deterministic for the same input (the outbox resumes by chunk index).
 */
export function formatChunks(markdown: string, maxChars = TELEGRAM_MAX_CHARS): TelegramChunk[] {
  const source = tablesAsCode(markdown.replace(/\r\n?/g, "\n"), tableText);
  const measure = (chunk: string) => htmlToVisible(markdownToHtml(chunk)).length;
  const pieces = splitMarkdown(source, { maxLength: maxChars, measure });
  return pieces.map((piece) => {
    const html = markdownToHtml(piece);
    // The plain fallback shows the Markdown as written when it fits, else the rendered text.
    const plain = piece.length <= maxChars ? piece : htmlToVisible(html);
    return { html, plain };
  });
}
