/**
 * Markdown (what the model writes) → Slack mrkdwn, and chunking to Slack's message length.
 * mrkdwn: `*bold*`, `_italic_`, `~strike~`, `` `code` ``, fenced blocks without a language, links as
 * `<url|text>`, quotes as `> `; no headings, lists or tables, so those become bold lines, bullets and
 * preformatted blocks. `&`, `<` and `>` are escaped everywhere (Slack reads them as control characters).
 */
import { Lexer, type Token, type Tokens } from "marked";
import { splitMarkdown } from "../shared/split.js";

/** Slack's recommended maximum for one message's text. */
export const SLACK_MAX_CHARS = 4000;

/** Escapes the three characters Slack treats as markup. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

interface InlineState {
  /** Inside bold already (headings): nested strong adds no markers. */
  bold?: boolean;
}

function inline(tokens: Token[] | undefined, state: InlineState = {}): string {
  if (!tokens) return "";
  return tokens.map((t) => inlineToken(t, state)).join("");
}

/** Link label: mrkdwn labels end at `|` or `>`, so those cannot appear inside. */
function linkLabel(tokens: Token[] | undefined, fallback: string): string {
  const label = inline(tokens).replace(/\|/g, "¦").trim();
  return label || fallback;
}

function inlineToken(token: Token, state: InlineState): string {
  switch (token.type) {
    case "text": {
      const t = token as Tokens.Text;
      return t.tokens ? inline(t.tokens, state) : escapeMrkdwn(t.text);
    }
    case "escape":
      return escapeMrkdwn((token as Tokens.Escape).text);
    case "strong": {
      const inner = inline((token as Tokens.Strong).tokens, { ...state, bold: true });
      return state.bold ? inner : `*${inner}*`;
    }
    case "em":
      return `_${inline((token as Tokens.Em).tokens, state)}_`;
    case "del":
      return `~${inline((token as Tokens.Del).tokens, state)}~`;
    case "codespan":
      return `\`${escapeMrkdwn((token as Tokens.Codespan).text)}\``;
    case "br":
      return "\n";
    case "link": {
      const t = token as Tokens.Link;
      const href = escapeMrkdwn(t.href);
      const label = linkLabel(t.tokens, href);
      return label === href ? `<${href}>` : `<${href}|${label}>`;
    }
    case "image": {
      const t = token as Tokens.Image;
      const href = escapeMrkdwn(t.href);
      const alt = escapeMrkdwn(t.text).replace(/\|/g, "¦").trim();
      return alt ? `<${href}|${alt}>` : `<${href}>`;
    }
    case "html":
      return escapeMrkdwn((token as Tokens.HTML).text);
    default:
      return "raw" in token && typeof token.raw === "string" ? escapeMrkdwn(token.raw) : "";
  }
}

function codeBlock(text: string): string {
  // Slack has no syntax highlighting: a language after the fence would show as a first line.
  return "```\n" + escapeMrkdwn(text.replace(/\n+$/, "")) + "\n```";
}

function indent(text: string, prefix: string): string {
  return text
    .split("\n")
    .map((line) => (line ? prefix + line : line))
    .join("\n");
}

function list(token: Tokens.List, depth: number): string {
  const start = typeof token.start === "number" ? token.start : 1;
  const bullet = depth === 0 ? "•" : depth === 1 ? "◦" : "▪";
  return token.items
    .map((item, i) => {
      const marker = token.ordered ? `${start + i}.` : bullet;
      const check = item.task ? (item.checked ? "☑ " : "☐ ") : "";
      const body = blocks(
        item.tokens.filter((t) => t.type !== "checkbox"),
        depth + 1,
      );
      const [first = "", ...rest] = body.split("\n");
      const pad = " ".repeat(marker.length + 1);
      return [`${marker} ${check}${first}`, ...rest.map((l) => (l ? pad + l : l))].join("\n");
    })
    .join("\n");
}

function table(token: Tokens.Table): string {
  const plain = (cell: Tokens.TableCell) => inline(cell.tokens).replace(/\n/g, " ");
  const rows = [token.header.map(plain), ...token.rows.map((r) => r.map(plain))];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? "").length)));
  const line = (r: string[]) =>
    r
      .map((cell, c) => cell.padEnd(widths[c] ?? 0))
      .join(" | ")
      .trimEnd();
  const rule = widths.map((w) => "-".repeat(w)).join("-+-");
  // Cells were escaped already; the block keeps columns aligned in Slack's monospace font.
  return "```\n" + [line(rows[0]!), rule, ...rows.slice(1).map(line)].join("\n") + "\n```";
}

function block(token: Token, depth: number): string | undefined {
  switch (token.type) {
    case "space":
    case "def":
      return undefined;
    case "paragraph":
      return inline((token as Tokens.Paragraph).tokens);
    case "text": {
      const t = token as Tokens.Text;
      return t.tokens ? inline(t.tokens) : escapeMrkdwn(t.text);
    }
    case "heading":
      return `*${inline((token as Tokens.Heading).tokens, { bold: true })}*`;
    case "code":
      return codeBlock((token as Tokens.Code).text);
    case "blockquote":
      return indent(blocks((token as Tokens.Blockquote).tokens, depth), "> ").replace(/^$/gm, ">");
    case "list":
      return list(token as Tokens.List, depth);
    case "table":
      return table(token as Tokens.Table);
    case "hr":
      return "──────────";
    case "html":
      return escapeMrkdwn((token as Tokens.HTML).text.replace(/\n+$/, ""));
    default:
      return "raw" in token && typeof token.raw === "string" ? escapeMrkdwn(token.raw.trim()) : undefined;
  }
}

function blocks(tokens: Token[], depth = 0): string {
  const out: string[] = [];
  for (const t of tokens) {
    const rendered = block(t, depth);
    if (rendered !== undefined && rendered !== "") out.push(rendered);
  }
  // Items of a tight list are single lines; everything else is separated by a blank line.
  return out.join(depth > 0 && tokens.every((t) => t.type !== "paragraph") ? "\n" : "\n\n");
}

/** Renders Markdown as Slack mrkdwn. Never throws: unknown constructs pass through escaped. */
export function markdownToMrkdwn(markdown: string): string {
  return blocks(Lexer.lex(markdown, { gfm: true })).trim();
}

/**
 * Splits Markdown into Slack messages: each rendered chunk is at most `maxChars` long, cut on
 * paragraph/line/word boundaries with code blocks closed and reopened (shared splitter), then
 * rendered. Deterministic: the same text always gives the same chunks (the outbox resumes by index).
 * @param maxChars @defaultValue SLACK_MAX_CHARS
 */
export function renderChunks(markdown: string, maxChars = SLACK_MAX_CHARS): string[] {
  const pieces = splitMarkdown(markdown, {
    maxLength: maxChars,
    measure: (chunk) => markdownToMrkdwn(chunk).length,
  });
  const out: string[] = [];
  for (const piece of pieces) {
    const rendered = markdownToMrkdwn(piece);
    if (!rendered) continue;
    // Rendering is not strictly monotonic in the source length; a rare overshoot is cut hard.
    for (let i = 0; i < rendered.length; i += maxChars) out.push(rendered.slice(i, i + maxChars));
  }
  return out;
}
