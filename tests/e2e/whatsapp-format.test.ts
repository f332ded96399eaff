/** Markdown → WhatsApp formatting and chunking (what the user sees on the phone). */
import { describe, expect, it } from "vitest";
import { formatChunks, markdownToWhatsApp } from "../../adapters/whatsapp/format.js";

describe("markdownToWhatsApp", () => {
  it.each([
    ["**bold** and __bold__", "*bold* and *bold*"],
    ["*italic* and _italic_", "_italic_ and _italic_"],
    ["~~gone~~", "~gone~"],
    ["***both***", "_*both*_"],
    ["use `npm test` now", "use `npm test` now"],
    ["# Title\n\ntext", "*Title*\n\ntext"],
    ["[the docs](https://example.com/docs)", "the docs (https://example.com/docs)"],
    ["<https://example.com>", "https://example.com"],
    ["[mail me](mailto:a@b.test)", "mail me (a@b.test)"],
    ["- one\n- two\n  - nested", "• one\n• two\n   • nested"],
    ["3. three\n4. four", "3. three\n4. four"],
    ["> quoted\n> twice", "> quoted\n> twice"],
    ["snake_case_name stays", "snake_case_name stays"],
    ["AT&amp;T &lt;3", "AT&T <3"],
    ["---", "──────────"],
  ])("%j → %j", (markdown, expected) => {
    expect(markdownToWhatsApp(markdown)).toBe(expected);
  });

  it("renders code blocks as monospace blocks without the language tag", () => {
    expect(markdownToWhatsApp("```python\nprint('**not bold**')\n```")).toBe(
      "```\nprint('**not bold**')\n```",
    );
  });

  it("renders tables as aligned monospace text", () => {
    const table = "| city | pop |\n|---|--:|\n| Paris | 2.1M |\n| Berlin | 3.7M |";
    expect(markdownToWhatsApp(table)).toBe(
      "```\ncity   |  pop\n-------+-----\nParis  | 2.1M\nBerlin | 3.7M\n```",
    );
  });
});

describe("formatChunks", () => {
  it("keeps a short reply in one message", () => {
    expect(formatChunks("**Hi** there")).toEqual(["*Hi* there"]);
  });

  it("splits at paragraph boundaries under the limit, deterministically", () => {
    const paragraphs = Array.from({ length: 12 }, (_, i) => `Paragraph ${i}: ${"word ".repeat(150).trim()}`);
    const text = paragraphs.join("\n\n");
    const chunks = formatChunks(text);
    expect(chunks.length).toBe(3);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(4000);
      expect(c.startsWith("Paragraph ")).toBe(true);
    }
    expect(chunks.join("\n\n")).toBe(text);
    expect(formatChunks(text)).toEqual(chunks);
  });

  it("closes and reopens a long code block across messages", () => {
    const code = Array.from({ length: 400 }, (_, i) => `line_${i} = compute(${i})`).join("\n");
    const chunks = formatChunks(`Here:\n\n\`\`\`js\n${code}\n\`\`\``);
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks.slice(1)) {
      expect(c.startsWith("```\n")).toBe(true);
      expect(c.endsWith("\n```")).toBe(true);
      expect(c.length).toBeLessThanOrEqual(4000);
    }
    const lines = chunks
      .join("\n")
      .split("\n")
      .filter((l) => l.startsWith("line_"));
    expect(lines).toHaveLength(400);
  });

  it("does not cut inside a bold span", () => {
    const text = `${"x ".repeat(1990)}**a bold phrase that crosses the limit** tail`;
    const chunks = formatChunks(text);
    expect(chunks.length).toBe(2);
    expect(chunks[1]).toContain("*a bold phrase that crosses the limit*");
  });
});
