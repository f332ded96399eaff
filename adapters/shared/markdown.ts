/**
 * Markdown helpers the platform formatters share: character references, tables as aligned monospace
 * text, and rewriting tables as code before a reply is split. Each adapter's `format.ts` keeps its own
 * dialect; only what renders the same on every platform lives here.
 */
import { Lexer, type Token, type Tokens } from "marked";

const NAMED_REFS: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: "\u00a0",
};

/**
 * Resolves the character references Markdown text may hold (`&amp;` is `&`, `&#x1F600;` an emoji), as
 * Markdown does outside code. Unknown names and out-of-range code points stay as written.
 */
export function decodeCharacterRefs(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]{1,6}|#\d{1,7}|[a-z]+);/g, (all, ref: string) => {
    const code = ref.startsWith("#x")
      ? Number.parseInt(ref.slice(2), 16)
      : ref.startsWith("#")
        ? Number(ref.slice(1))
        : undefined;
    if (code === undefined) return NAMED_REFS[ref] ?? all;
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : all;
  });
}

/** Column alignment as marked reports it (`| ---: |` is `"right"`); only `"right"` changes the output. */
export type ColumnAlign = "left" | "right" | "center" | null | undefined;

/**
 * Rows of cell texts as an aligned plain-text table: cells padded to their column's width in code
 * points, separated by ` | `, the header (first row) underlined by a `-+-` rule. Right-aligned columns
 * are padded on the left. A row shorter than the widest one is filled with empty cells.
 */
export function alignTable(rows: string[][], align: readonly ColumnAlign[] = []): string {
  const width = (s: string) => [...s].length;
  const columns = Math.max(...rows.map((r) => r.length));
  const widths = Array.from({ length: columns }, (_, col) =>
    Math.max(...rows.map((r) => width(r[col] ?? ""))),
  );
  const line = (cells: string[]) =>
    widths
      .map((w, col) => {
        const cell = cells[col] ?? "";
        const pad = " ".repeat(Math.max(0, w - width(cell)));
        return align[col] === "right" ? pad + cell : cell + pad;
      })
      .join(" | ")
      .trimEnd();
  const rule = widths.map((w) => "-".repeat(Math.max(1, w))).join("-+-");
  return [line(rows[0] ?? []), rule, ...rows.slice(1).map(line)].join("\n");
}

/**
 * Rewrites top-level tables as fenced code blocks holding `tableText(table)`, so that a long table is
 * split like code (fence closed and reopened), never into a headerless half that no longer parses as a
 * table. `tableText` must not throw; everything but the tables is returned as written.
 */
export function tablesAsCode(markdown: string, tableText: (table: Tokens.Table) => string): string {
  let out = "";
  let cursor = 0;
  for (const token of new Lexer({ gfm: true }).lex(markdown)) {
    if (token.type !== "table") continue;
    const at = markdown.indexOf(token.raw, cursor);
    if (at < 0) continue;
    const trailing = token.raw.endsWith("\n") ? "\n" : "";
    out += `${markdown.slice(cursor, at)}\`\`\`\n${tableText(token as Tokens.Table)}\n\`\`\`${trailing}`;
    cursor = at + token.raw.length;
  }
  return out + markdown.slice(cursor);
}

/**
 * A list as plain text for platforms without list markup: `•` bullets or numbers from the list's start,
 * ☐/☑ task boxes, items indented three spaces per `depth`. `renderItem` renders an item's block tokens
 * (checkbox tokens removed) one level deeper, joined by `separator` (a blank line in a loose list).
 */
export function plainTextList(
  token: Tokens.List,
  depth: number,
  renderItem: (tokens: Token[], separator: string) => string,
): string {
  const start = typeof token.start === "number" ? token.start : 1;
  const indent = "   ".repeat(depth);
  return token.items
    .map((item, i) => {
      const bullet = token.ordered ? `${start + i}.` : "•";
      const box = item.task ? (item.checked ? "☑ " : "☐ ") : "";
      const body = renderItem(
        item.tokens.filter((t) => t.type !== "checkbox"),
        item.loose ? "\n\n" : "\n",
      );
      return `${indent}${bullet} ${box}${body}`;
    })
    .join("\n");
}
