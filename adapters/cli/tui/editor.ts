/**
 * The input: multi-line text with a cursor, the usual line-editing keys, and its layout on screen
 * (wrapped at the pane's width by display columns, so wide characters and emoji keep the cursor true).
 */
import { displayWidth } from "./wrap.js";

/** The input's lines on screen and where the cursor is among them. */
export interface EditorLayout {
  lines: string[];
  cursor: { row: number; col: number };
}

const WORD = /[\p{L}\p{N}_]/u;

/** The text being written and its cursor (an index into `text`, never inside a surrogate pair). */
export class Editor {
  text = "";
  cursor = 0;

  set(text: string): void {
    this.text = text;
    this.cursor = text.length;
  }

  clear(): void {
    this.set("");
  }

  insert(s: string): void {
    this.text = this.text.slice(0, this.cursor) + s + this.text.slice(this.cursor);
    this.cursor += s.length;
  }

  backspace(): void {
    if (this.cursor === 0) return;
    const from = this.before(this.cursor);
    this.text = this.text.slice(0, from) + this.text.slice(this.cursor);
    this.cursor = from;
  }

  deleteForward(): void {
    if (this.cursor >= this.text.length) return;
    this.text = this.text.slice(0, this.cursor) + this.text.slice(this.after(this.cursor));
  }

  left(): void {
    this.cursor = this.before(this.cursor);
  }

  right(): void {
    this.cursor = this.after(this.cursor);
  }

  /** To the start of the current line. */
  home(): void {
    this.cursor = this.text.lastIndexOf("\n", this.cursor - 1) + 1;
  }

  /** To the end of the current line. */
  end(): void {
    const nl = this.text.indexOf("\n", this.cursor);
    this.cursor = nl < 0 ? this.text.length : nl;
  }

  wordLeft(): void {
    let i = this.cursor;
    while (i > 0 && !WORD.test(this.text[i - 1]!)) i--;
    while (i > 0 && WORD.test(this.text[i - 1]!)) i--;
    this.cursor = i;
  }

  wordRight(): void {
    let i = this.cursor;
    while (i < this.text.length && !WORD.test(this.text[i]!)) i++;
    while (i < this.text.length && WORD.test(this.text[i]!)) i++;
    this.cursor = i;
  }

  /** Ctrl+W: the word before the cursor. */
  deleteWordBack(): void {
    const end = this.cursor;
    this.wordLeft();
    this.text = this.text.slice(0, this.cursor) + this.text.slice(end);
  }

  /** Ctrl+U: from the start of the line to the cursor. */
  killToStart(): void {
    const end = this.cursor;
    this.home();
    this.text = this.text.slice(0, this.cursor) + this.text.slice(end);
  }

  /** Ctrl+K: from the cursor to the end of the line. */
  killToEnd(): void {
    const start = this.cursor;
    this.end();
    this.text = this.text.slice(0, start) + this.text.slice(this.cursor);
    this.cursor = start;
  }

  /** Whether the cursor is on the first (or last) line of the text, where ↑ (↓) leave the input. */
  onFirstLine(): boolean {
    return !this.text.slice(0, this.cursor).includes("\n");
  }

  onLastLine(): boolean {
    return !this.text.slice(this.cursor).includes("\n");
  }

  /** Moves up or down one line of text, keeping the column where it can. */
  vertical(delta: -1 | 1): void {
    const lineStart = this.text.lastIndexOf("\n", this.cursor - 1) + 1;
    const column = this.cursor - lineStart;
    if (delta < 0) {
      if (lineStart === 0) return;
      const prevStart = this.text.lastIndexOf("\n", lineStart - 2) + 1;
      this.cursor = Math.min(prevStart + column, lineStart - 1);
    } else {
      const nl = this.text.indexOf("\n", this.cursor);
      if (nl < 0) return;
      const nextEnd = this.text.indexOf("\n", nl + 1);
      this.cursor = Math.min(nl + 1 + column, nextEnd < 0 ? this.text.length : nextEnd);
    }
  }

  /** The text wrapped into rows of at most `width` columns, and the cursor's row and column. */
  layout(width: number): EditorLayout {
    const w = Math.max(1, width);
    const lines: string[] = [];
    let cursor = { row: 0, col: 0 };
    let offset = 0;
    for (const logical of this.text.split("\n")) {
      let row = "";
      let cols = 0;
      let index = offset;
      const place = () => {
        if (index === this.cursor) cursor = { row: lines.length, col: cols };
      };
      for (const ch of logical) {
        const cw = displayWidth(ch);
        if (cols + cw > w) {
          lines.push(row);
          row = "";
          cols = 0;
        }
        place();
        row += ch;
        cols += cw;
        index += ch.length;
      }
      if (cols >= w && index === this.cursor) {
        lines.push(row);
        row = "";
        cols = 0;
      }
      place();
      lines.push(row);
      offset += logical.length + 1;
    }
    return { lines, cursor };
  }

  private before(i: number): number {
    if (i <= 0) return 0;
    const low = this.text.charCodeAt(i - 1);
    return low >= 0xdc00 && low <= 0xdfff && i >= 2 ? i - 2 : i - 1;
  }

  private after(i: number): number {
    if (i >= this.text.length) return this.text.length;
    const high = this.text.charCodeAt(i);
    return high >= 0xd800 && high <= 0xdbff && i + 1 < this.text.length ? i + 2 : i + 1;
  }
}
