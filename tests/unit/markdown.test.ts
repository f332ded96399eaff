import { describe, expect, it } from "vitest";
import { alignTable, decodeCharacterRefs, tablesAsCode } from "../../adapters/shared/markdown.js";

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
