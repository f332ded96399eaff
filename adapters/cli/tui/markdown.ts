/**
 * Markdown for the terminal: marked's tokens turned into styled lines no wider than the pane. Headings
 * bold, emphasis as such, code blocks coloured behind a gutter, lists with hanging indents, tables as a
 * grid when they fit (as `header: value` lines when they do not), links with their address.
 */
import { Lexer, type Token, type Tokens } from "marked";
import stringWidth from "string-width";
import type { Highlighter } from "./highlight.js";
import type { Theme } from "./theme.js";
import { wrapText } from "./wrap.js";

/** What rendering needs besides the text. */
export interface MarkdownContext {
  theme: Theme;
  highlight: Highlighter;
}

/** `text` as lines at most `width` columns wide (at least 10). */
export function renderMarkdown(text: string, width: number, ctx: MarkdownContext): string[] {
  let tokens: Token[];
  try {
    tokens = Lexer.lex(text);
  } catch {
    return wrapText(text, width);
  }
  return blocks(tokens, Math.max(10, width), ctx);
}

function blocks(tokens: readonly Token[], width: number, ctx: MarkdownContext): string[] {
  const out: string[] = [];
  for (const token of tokens) {
    const lines = block(token, width, ctx);
    if (lines.length === 0) continue;
    if (out.length > 0) out.push("");
    out.push(...lines);
  }
  return out;
}

function block(token: Token, width: number, ctx: MarkdownContext): string[] {
  const { theme } = ctx;
  switch (token.type) {
    case "space":
    case "def":
      return [];
    case "heading": {
      const t = token as Tokens.Heading;
      const text = inline(t.tokens, ctx);
      const styled = t.depth === 1 ? theme.underline(theme.bold(text)) : theme.bold(text);
      return wrapText(t.depth <= 2 ? theme.accent(styled) : styled, width);
    }
    case "paragraph":
      return wrapText(inline((token as Tokens.Paragraph).tokens, ctx), width);
    case "text": {
      const t = token as Tokens.Text;
      return wrapText(t.tokens ? inline(t.tokens, ctx) : t.text, width);
    }
    case "code":
      return codeBlock(token as Tokens.Code, width, ctx);
    case "blockquote":
      return blocks((token as Tokens.Blockquote).tokens, width - 2, ctx).map((l) => `${theme.dim("│")} ${l}`);
    case "list":
      return list(token as Tokens.List, width, ctx);
    case "hr":
      return [theme.dim("─".repeat(Math.min(width, 40)))];
    case "table":
      return table(token as Tokens.Table, width, ctx);
    case "html":
      return wrapText((token as Tokens.HTML).text.trimEnd(), width);
    default:
      return "text" in token && typeof token.text === "string" ? wrapText(token.text, width) : [];
  }
}

function codeBlock(token: Tokens.Code, width: number, ctx: MarkdownContext): string[] {
  const { theme } = ctx;
  const code = ctx.highlight(token.text, token.lang);
  const gutter = theme.dim("│ ");
  const lines = code
    .split("\n")
    .flatMap((line) => (line ? wrapText(line, width - 2, false) : [""]))
    .map((line) => gutter + line);
  const label = token.lang?.trim().split(/\s/)[0];
  return label ? [theme.dim(`╭ ${label}`), ...lines] : lines;
}

function list(token: Tokens.List, width: number, ctx: MarkdownContext): string[] {
  const out: string[] = [];
  const start = typeof token.start === "number" ? token.start : 1;
  token.items.forEach((item, i) => {
    const check = item.task ? (item.checked ? "[x] " : "[ ] ") : "";
    const marker = `${token.ordered ? `${start + i}.` : "•"} ${check}`;
    const indent = stringWidth(marker);
    const content = item.tokens.filter((t) => t.type !== "checkbox");
    const lines = blocks(content, width - indent, ctx);
    if (token.loose && i > 0) out.push("");
    lines.forEach((line, n) => {
      out.push(n === 0 ? ctx.theme.accent(marker) + line : " ".repeat(indent) + line);
    });
    if (lines.length === 0) out.push(ctx.theme.accent(marker));
  });
  return out;
}

function table(token: Tokens.Table, width: number, ctx: MarkdownContext): string[] {
  const { theme } = ctx;
  const header = token.header.map((c) => inline(c.tokens, ctx));
  const rows = token.rows.map((r) => r.map((c) => inline(c.tokens, ctx)));
  const widths = header.map((h, i) => Math.max(stringWidth(h), ...rows.map((r) => stringWidth(r[i] ?? ""))));
  const total = widths.reduce((a, b) => a + b, 0) + 3 * (widths.length - 1);
  if (total > width) {
    // Too wide for the pane: one `header: value` line per cell, a blank line between rows.
    return rows.flatMap((row, r) => [
      ...(r > 0 ? [""] : []),
      ...row.flatMap((cell, i) => wrapText(`${theme.bold(header[i] ?? "")}: ${cell}`, width)),
    ]);
  }
  const pad = (text: string, i: number) =>
    text + " ".repeat(Math.max(0, (widths[i] ?? 0) - stringWidth(text)));
  const line = (cells: string[]) => cells.map(pad).join(theme.dim(" │ "));
  return [
    line(header.map((h) => theme.bold(h))),
    theme.dim(widths.map((w) => "─".repeat(w)).join("─┼─")),
    ...rows.map(line),
  ];
}

/** Inline tokens as one styled string (line breaks kept as `\n`). */
function inline(tokens: readonly Token[] | undefined, ctx: MarkdownContext): string {
  const { theme } = ctx;
  let out = "";
  for (const token of tokens ?? []) {
    switch (token.type) {
      case "strong":
        out += theme.bold(inline((token as Tokens.Strong).tokens, ctx));
        break;
      case "em":
        out += theme.italic(inline((token as Tokens.Em).tokens, ctx));
        break;
      case "del":
        out += theme.strike(inline((token as Tokens.Del).tokens, ctx));
        break;
      case "codespan":
        out += theme.code((token as Tokens.Codespan).text);
        break;
      case "br":
        out += "\n";
        break;
      case "link": {
        const t = token as Tokens.Link;
        const text = inline(t.tokens, ctx);
        out +=
          t.text === t.href
            ? theme.underline(t.href)
            : `${theme.underline(text)} ${theme.dim(`(${t.href})`)}`;
        break;
      }
      case "image":
        out += theme.dim(`[image: ${(token as Tokens.Image).text || (token as Tokens.Image).href}]`);
        break;
      case "text": {
        const t = token as Tokens.Text;
        out += t.tokens ? inline(t.tokens, ctx) : t.text;
        break;
      }
      default:
        out += "text" in token && typeof token.text === "string" ? token.text : "";
    }
  }
  return out;
}
