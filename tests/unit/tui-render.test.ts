/**
 * The terminal UI's rendering: Markdown to lines no wider than the pane, a streamed reply's lines
 * (kept block by block) equal to the whole reply's, and no colour without colour.
 */
import stringWidth from "string-width";
import { describe, expect, it } from "vitest";
import { createHighlighter, loadHighlighting } from "../../adapters/cli/tui/highlight.js";
import { renderMarkdown } from "../../adapters/cli/tui/markdown.js";
import { createTheme } from "../../adapters/cli/tui/theme.js";
import { type Entry, Transcript } from "../../adapters/cli/tui/transcript.js";
import { wrapText } from "../../adapters/cli/tui/wrap.js";
import { colourCodes } from "../helpers/tmux.js";

const REPLY = [
  "# Release notes",
  "",
  "Some **bold**, some _italic_, `inline code` and a [link](https://example.org/docs) in a paragraph long enough to wrap at least once.",
  "",
  "1. first step",
  "2. second step with a longer description that wraps under its own indent",
  "   - nested point",
  "",
  "```ts",
  "const answer: number = 42; // a comment that is long enough to be wrapped in a narrow pane",
  "",
  "function f() {",
  '  return "text";',
  "}",
  "```",
  "",
  "| name | value |",
  "|------|-------|",
  "| a    | 1     |",
  "",
  "> a quote",
  "",
  "Last paragraph.",
].join("\n");

function ctx(color: boolean) {
  const theme = createTheme(color);
  return { theme, highlight: createHighlighter(theme), expanded: false };
}

describe("terminal Markdown", () => {
  it("keeps every line within the width, at 80, 60 and 24 columns", async () => {
    await loadHighlighting();
    for (const width of [80, 60, 24]) {
      const lines = renderMarkdown(REPLY, width, ctx(true));
      for (const line of lines) expect(stringWidth(line)).toBeLessThanOrEqual(width);
      expect(lines.join("\n")).toContain("Last paragraph.");
    }
  });

  it("styles without colour under NO_COLOR, and keeps inline code recognisable", async () => {
    await loadHighlighting();
    const plain = renderMarkdown(REPLY, 80, ctx(false)).join("\n");
    expect(colourCodes(plain)).toEqual([]);
    expect(plain).toContain("`inline code`");
    expect(plain).toContain("\x1b[1m");
    expect(colourCodes(renderMarkdown(REPLY, 80, ctx(true)).join("\n")).length).toBeGreaterThan(0);
  });

  it("shows lists with hanging indents, code behind a gutter, tables as a grid or as lines", () => {
    const lines = renderMarkdown(REPLY, 60, ctx(false));
    expect(lines).toContain("1. first step");
    expect(lines.some((l) => l.startsWith("   ") && l.includes("its own indent"))).toBe(true);
    expect(lines.filter((l) => l.includes("│ ")).length).toBeGreaterThan(4);
    expect(lines.some((l) => /name.*│.*value/.test(l))).toBe(true);
    const narrow = renderMarkdown(
      "| a long header | another long header |\n|---|---|\n| x | y |",
      20,
      ctx(false),
    );
    expect(narrow.join("\n")).toMatch(/a long header\S*: x/);
  });
});

describe("a streamed reply", () => {
  it("has the same lines piece by piece as the whole reply, and renders only the last block again", () => {
    const c = ctx(false);
    const transcript = new Transcript();
    const entry: Extract<Entry, { kind: "assistant" }> = {
      kind: "assistant",
      rev: 0,
      text: "",
      streaming: true,
    };
    transcript.entries.push(entry);
    let rendered = 0;
    for (let at = 0; at < REPLY.length; at += 7) {
      entry.text = REPLY.slice(0, at + 7);
      entry.rev++;
      transcript.window(80, 1000, 0, c);
      rendered += transcript.rendered;
    }
    const streamed = transcript.window(80, 1000, 0, c).lines;
    const whole = new Transcript();
    whole.entries.push({ kind: "assistant", rev: 0, text: REPLY, streaming: false });
    expect(streamed).toEqual(whole.window(80, 1000, 0, c).lines);
    // Re-rendering everything on every piece would cost far more lines than that.
    const everything = Math.ceil(REPLY.length / 7) * streamed.length;
    expect(rendered).toBeLessThan(everything / 2);
  });
});

describe("wrapping", () => {
  it("breaks at spaces by display columns, breaks long words, and keeps a style on every line it spans", () => {
    expect(wrapText("one two three four", 9)).toEqual(["one two", "three", "four"]);
    expect(wrapText("abcdefghij", 4)).toEqual(["abcd", "efgh", "ij"]);
    expect(wrapText("漢字 漢字漢字", 4)).toEqual(["漢字", "漢字", "漢字"]);
    const bold = wrapText("plain \x1b[1mbold words here\x1b[22m end", 11);
    expect(bold).toEqual(["plain \x1b[1mbold\x1b[0m", "\x1b[1mwords here\x1b[22m", "end"]);
    expect(wrapText("    indented code line", 12, false)).toEqual(["    indented", "code line"]);
  });
});
