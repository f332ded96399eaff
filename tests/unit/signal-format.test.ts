/** Markdown → Signal text and style ranges (UTF-16 offsets, as signal-cli's textStyle takes them). */
import { describe, expect, it } from "vitest";
import { SIGNAL_MAX_CHARS, signalChunks, styledChunk } from "../../adapters/signal/format.js";

describe("signal format", () => {
  it("turns emphasis, strikethrough, code, headings and links into text with ranges", () => {
    expect(styledChunk("# Plan\n**bold** and _it_ and ~~no~~ [docs](https://x.test)")).toEqual({
      text: "Plan\nbold and it and no docs (https://x.test)",
      styles: ["0:4:BOLD", "5:4:BOLD", "14:2:ITALIC", "21:2:STRIKETHROUGH"],
    });
  });

  it("keeps code as written, monospace, and counts offsets after emoji in UTF-16 units", () => {
    const { text, styles } = styledChunk("🎉 `a*b*c`\n```js\nlet x = 1;\n```\n**end**");
    expect(text).toBe("🎉 a*b*c\nlet x = 1;\nend");
    expect(styles).toEqual(["3:5:MONOSPACE", "9:10:MONOSPACE", "20:3:BOLD"]);
  });

  it("leaves lone asterisks and snake_case alone", () => {
    expect(styledChunk("2 * 3 * 4 and snake_case_name")).toEqual({
      text: "2 * 3 * 4 and snake_case_name",
      styles: [],
    });
  });

  it("splits long replies into chunks within the limit", () => {
    const chunks = signalChunks(Array.from({ length: 600 }, (_, i) => `word${i}`).join(" "));
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    for (const c of chunks) expect(c.text.length).toBeLessThanOrEqual(SIGNAL_MAX_CHARS);
  });
});
