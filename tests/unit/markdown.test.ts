import { Lexer, type Token, type Tokens } from "marked";
import { describe, expect, it } from "vitest";
import {
  alignTable,
  decodeCharacterRefs,
  plainTextList,
  tablesAsCode,
} from "../../adapters/shared/markdown.js";

describe("decodeCharacterRefs", () => {
  it("resolves named, decimal and hex references", () => {
    expect(decodeCharacterRefs("a &amp; b &lt;c&gt; &quot;d&quot; &apos;e&apos;")).toBe(`a & b <c> "d" 'e'`);
    expect(decodeCharacterRefs("&#65;&#x1F600;&nbsp;")).toBe("A😀\u00a0");
  });

  it("leaves unknown names and impossible code points as written", () => {
    expect(decodeCharacterRefs("&foo; &#0; &#x110000; & alone")).toBe("&foo; &#0; &#x110000; & alone");
  });
});

describe("alignTable", () => {
  it("pads columns by code points, underlines the header and right-aligns where asked", () => {
    const text = alignTable(
      [
        ["Name", "Qty"],
        ["Zoë 😀", "3"],
        ["Al", "120"],
      ],
      [null, "right"],
    );
    expect(text.split("\n")).toEqual(["Name  | Qty", "------+----", "Zoë 😀 |   3", "Al    | 120"]);
  });

  it("fills short rows with empty cells, keeps a rule for an empty column and trims line ends", () => {
    expect(alignTable([["a", ""], ["bb"]]).split("\n")).toEqual(["a  |", "---+--", "bb |"]);
  });
});

describe("tablesAsCode", () => {
  it("replaces each top-level table with a code block of its rendering and keeps the rest", () => {
    const markdown = "Before\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nAfter `| x |`\n";
    const out = tablesAsCode(markdown, (table) => `${table.header.length} columns, ${table.rows.length} row`);
    expect(out).toBe("Before\n\n```\n2 columns, 1 row\n```\n\nAfter `| x |`\n");
  });

  it("returns text without tables unchanged", () => {
    const markdown = "```\n| a | b |\n|---|---|\n```\n\n- item | not a table";
    expect(tablesAsCode(markdown, () => "never")).toBe(markdown);
  });
});

describe("plainTextList", () => {
  const firstList = (markdown: string) => new Lexer({ gfm: true }).lex(markdown)[0] as Tokens.List;
  // Renders an item as its raw text, one level deeper, to see what the list itself adds.
  const render = (token: Tokens.List, depth: number): string =>
    plainTextList(token, depth, (tokens: Token[], separator) =>
      tokens
        .map((t) => (t.type === "list" ? render(t as Tokens.List, depth + 1) : t.raw.trim()))
        .filter((text) => text.length > 0)
        .join(separator),
    );

  it("numbers from the list's start, bullets, task boxes and indents nested lists", () => {
    expect(render(firstList("3. one\n4. two\n   - [x] done\n   - [ ] todo\n"), 0)).toBe(
      "3. one\n4. two\n   • ☑ done\n   • ☐ todo",
    );
  });

  it("separates the blocks of a loose item with a blank line", () => {
    expect(render(firstList("- first\n\n  more\n- second\n"), 0)).toBe("• first\n\nmore\n• second");
  });
});
