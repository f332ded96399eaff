/** The terminal UI's input: keys out of raw terminal bytes, and the editor's text, cursor and layout. */
import { describe, expect, it } from "vitest";
import { Editor } from "../../adapters/cli/tui/editor.js";
import { KeyParser, looksPasted } from "../../adapters/cli/tui/keys.js";

describe("keys", () => {
  it("reads text runs, control keys, escape sequences with modifiers, and a lone Escape at once", () => {
    const keys = new KeyParser().feed("héllo\r\x1b[A\x1b[1;5C\x1b[3~\x7f\x03\x1b\r\x1bOB\x1b[5~\t");
    expect(keys.map((k) => [k.name, k.text ?? "", k.ctrl ?? false, k.meta ?? false])).toEqual([
      ["text", "héllo", false, false],
      ["return", "", false, false],
      ["up", "", false, false],
      ["right", "", true, false],
      ["delete", "", false, false],
      ["backspace", "", false, false],
      ["c", "", true, false],
      ["return", "", false, true],
      ["down", "", false, false],
      ["pageup", "", false, false],
      ["tab", "", false, false],
    ]);
    expect(new KeyParser().feed("\x1b")).toEqual([{ name: "escape" }]);
  });

  it("keeps a bracketed paste whole across chunks, its line breaks as newlines", () => {
    const parser = new KeyParser();
    expect(parser.feed("\x1b[200~line one\r\nline")).toEqual([]);
    expect(parser.feed(" two\x1b[201~x")).toEqual([
      { name: "paste", text: "line one\nline two" },
      { name: "text", text: "x" },
    ]);
    expect(looksPasted("a\rb\r")).toBe(true);
    expect(looksPasted("hello\r")).toBe(false);
  });
});

describe("editor", () => {
  it("edits around the cursor, by words and lines, and never splits a surrogate pair", () => {
    const e = new Editor();
    e.insert("hello world");
    e.wordLeft();
    e.insert("big ");
    expect(e.text).toBe("hello big world");
    e.end();
    e.deleteWordBack();
    expect(e.text).toBe("hello big ");
    e.insert("😀");
    e.backspace();
    expect(e.text).toBe("hello big ");
    e.insert("\nsecond");
    expect(e.onFirstLine()).toBe(false);
    e.vertical(-1);
    expect(e.onFirstLine()).toBe(true);
    e.killToEnd();
    expect(e.text).toBe("hello \nsecond");
  });

  it("wraps by display columns and places the cursor on the wrapped row", () => {
    const e = new Editor();
    e.insert("漢字漢字漢字ab");
    const layout = e.layout(5);
    expect(layout.lines).toEqual(["漢字", "漢字", "漢字a", "b"]);
    expect(layout.cursor).toEqual({ row: 3, col: 1 });
  });
});
