/**
 * The model's Markdown → WhatsApp's own formatting, and chunking. WhatsApp knows `*bold*`, `_italic_`,
 * `~strike~`, `` `inline code` ``, ```` ```monospace blocks``` ```` and `> quotes`; everything else becomes
 * plain text: headings turn bold, lists get bullets or numbers, links show their address, tables become
 * monospace blocks. WhatsApp has no escape character, so text outside formatting is sent as written.
 */
import { Lexer, type Token, type Tokens } from "marked";
import { alignTable, decodeCharacterRefs, plainTextList, tablesAsCode } from "../shared/markdown.js";
import { splitMarkdown } from "../shared/split.js";

/**
 * Characters per message. WhatsApp accepts far longer texts, but a wall of 60,000 characters is
 * unreadable on a phone; about 4,000 keeps each message one screenful or a few.
 */
export const WHATSAPP_MAX_CHARS = 4000;

/** Wraps `inner` in a marker; WhatsApp ignores markers around empty or space-padded text. */
function wrap(marker: string, inner: string): string {
  const core = inner.trim();
  if (!core) return inner;
  const lead = inner.slice(0, inner.indexOf(core));
  const trail = inner.slice(lead.length + core.length);
  return `${lead}${marker}${core}${marker}${trail}`;
}

function inline(tokens: Token[] | undefined): string {
  let out = "";
  for (const token of tokens ?? []) out += inlineToken(token);
  return out;
}

function linkText(label: string, href: string): string {
  const bare = href.replace(/^mailto:/i, "");
  if (!label || label === href || label === bare) return bare;
  return `${label} (${bare})`;
}

function inlineToken(token: Token): string {
  const t = token as Tokens.Generic;
  switch (token.type) {
    case "strong":
      return wrap("*", inline(t.tokens));
    case "em":
      return wrap("_", inline(t.tokens));
    case "del":
      return wrap("~", inline(t.tokens));
    case "codespan":
      return `\`${t["text"] as string}\``;
    case "br":
      return "\n";
    case "link":
      return linkText(inline(t.tokens), t["href"] as string);
    case "image":
      return linkText(t["text"] as string, t["href"] as string);
    case "escape":
      return t["text"] as string;
    case "text":
      return t.tokens ? inline(t.tokens) : decodeCharacterRefs(t["text"] as string);
    default:
      return t.raw;
  }
}

/** A table as aligned text (sent inside a monospace block). */
function tableText(table: Tokens.Table): string {
  const cell = (c: Tokens.TableCell) => inline(c.tokens).replace(/[*_~`]/g, "");
  const rows = [table.header, ...table.rows].map((row) => row.map(cell));
  return alignTable(rows, table.align);
}

const monospace = (text: string) => `\`\`\`\n${text.replace(/\n+$/, "")}\n\`\`\``;

function blocks(tokens: Token[], depth: number, separator = "\n\n"): string {
  return tokens
    .map((t) => block(t, depth))
    .filter((s) => s.length > 0)
    .join(separator);
}

function list(token: Tokens.List, depth: number): string {
  return plainTextList(token, depth, (tokens, separator) => blocks(tokens, depth + 1, separator));
}

function block(token: Token, depth: number): string {
  const t = token as Tokens.Generic;
  switch (token.type) {
    case "space":
    case "def":
      return "";
    case "paragraph":
    case "text":
      return t.tokens ? inline(t.tokens) : decodeCharacterRefs(t["text"] as string);
    case "heading":
      return wrap("*", inline(t.tokens));
    case "code":
      return monospace(t["text"] as string);
    case "blockquote":
      return blocks(t.tokens ?? [], depth)
        .split("\n")
        .map((line) => (line ? `> ${line}` : ">"))
        .join("\n");
    case "list":
      return list(token as Tokens.List, depth);
    case "table":
      return monospace(tableText(token as Tokens.Table));
    case "hr":
      return "──────────";
    case "html":
      return t.raw.trim();
    default:
      return t.raw.trim();
  }
}

const lexer = () => new Lexer({ gfm: true });

/** Renders Markdown as WhatsApp-formatted text. */
export function markdownToWhatsApp(markdown: string): string {
  return blocks(lexer().lex(markdown.replace(/\r\n?/g, "\n")), 0).trim();
}

/**
 * Splits a Markdown reply into WhatsApp messages of at most `maxChars` rendered characters, on
 * paragraph, line or word boundaries, with code blocks closed and reopened (the shared splitter), then
 * renders each. Deterministic for the same input (the outbox resumes by chunk index).
 */
export function formatChunks(markdown: string, maxChars = WHATSAPP_MAX_CHARS): string[] {
  const source = tablesAsCode(markdown.replace(/\r\n?/g, "\n"), tableText);
  const measure = (chunk: string) => markdownToWhatsApp(chunk).length;
  return splitMarkdown(source, { maxLength: maxChars, measure })
    .map(markdownToWhatsApp)
    .filter((c) => c.length > 0);
}
