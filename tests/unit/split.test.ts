import { describe, expect, it } from "vitest";
import { openFenceAtEnd, splitMarkdown } from "../../adapters/shared/split.js";

/** Every chunk must have balanced fences. */
function fencesBalanced(chunk: string): boolean {
  return openFenceAtEnd(chunk) === undefined;
}

describe("splitMarkdown", () => {
  it("returns a short text as one chunk", () => {
    expect(splitMarkdown("hello **world**", { maxLength: 100 })).toEqual(["hello **world**"]);
  });

  it("splits on paragraph boundaries and loses no words", () => {
    const paras = Array.from({ length: 30 }, (_, i) => `Paragraph ${i} ${"word ".repeat(20).trim()}.`);
    const text = paras.join("\n\n");
    const chunks = splitMarkdown(text, { maxLength: 500 });
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(500);
      expect(c.startsWith("Paragraph")).toBe(true);
    }
    expect(chunks.join("\n\n")).toBe(text);
  });

  it("closes and reopens code fences with their language", () => {
    const code = Array.from({ length: 200 }, (_, i) => `print(${i})`).join("\n");
    const text = `Intro text.\n\n\`\`\`python\n${code}\n\`\`\`\n\nOutro.`;
    const chunks = splitMarkdown(text, { maxLength: 400 });
    expect(chunks.length).toBeGreaterThan(3);
    for (const [i, c] of chunks.entries()) {
      expect(c.length).toBeLessThanOrEqual(400);
      expect(fencesBalanced(c)).toBe(true);
      if (i > 0 && i < chunks.length - 1) expect(c.startsWith("```python\n")).toBe(true);
    }
    const lines = chunks
      .join("\n")
      .split("\n")
      .filter((l) => l.startsWith("print("));
    expect(lines).toEqual(code.split("\n"));
  });

  it("never splits a surrogate pair and counts emoji as two units", () => {
    const text = "😀".repeat(3000);
    const chunks = splitMarkdown(text, { maxLength: 4096 });
    expect(chunks.length).toBe(2);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(4096);
      expect(c).toMatch(/^(😀)+$/u);
    }
    expect(chunks.join("")).toBe(text);
  });

  it("does not cut inside an inline span (bold, code, link text) when it can cut outside it", () => {
    const text = `${"word ".repeat(60)}**bold ${"b ".repeat(30)}end** \`code ${"c ".repeat(30)}end\` [link ${"l ".repeat(30)}](https://x.org) ${"tail ".repeat(40)}`;
    const chunks = splitMarkdown(text, { maxLength: 120 });
    for (const c of chunks) {
      expect((c.match(/\*\*/g)?.length ?? 0) % 2).toBe(0);
      expect((c.match(/`/g)?.length ?? 0) % 2).toBe(0);
      expect((c.match(/\[/g)?.length ?? 0) - (c.match(/\]/g)?.length ?? 0)).toBe(0);
    }
    expect(chunks.join(" ").replace(/\s+/g, " ")).toBe(text.trim().replace(/\s+/g, " "));
  });

  it("honours a custom measure (rendered length)", () => {
    const text = "a & b < c > d ".repeat(300);
    const render = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
    const chunks = splitMarkdown(text, { maxLength: 1000, measure: (s) => render(s).length });
    for (const c of chunks) expect(render(c).length).toBeLessThanOrEqual(1000);
    expect(chunks.join(" ").replace(/\s+/g, " ")).toBe(text.trim().replace(/\s+/g, " "));
  });
});
