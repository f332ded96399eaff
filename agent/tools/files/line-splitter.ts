/**
 * Lines out of a stream of text chunks in bounded memory: a line keeps at most `maxLineChars`
 * characters and the rest of it is only counted, and a line the caller does not want is only counted.
 * A file of one 1 GB line costs what a file of short lines costs.
 *
 * Lines end at "\n" (as `wc -l`, `sed -n` and `grep -n` count them); a "\r" before it is dropped
 * unless `keepCr`; a final line break ends the last line rather than starting an empty one.
 */

/** Receives each wanted line: its number (1-based), its first characters, how many characters were cut. */
export type LineHandler = (lineNumber: number, text: string, cutChars: number) => void;

/** Options of {@link LineSplitter}. */
export interface LineSplitterOptions {
  /** Characters kept of each line; the rest is counted in `cutChars`. */
  maxLineChars: number;
  /** Asked once as each line starts; an unwanted line is counted, never built. @defaultValue every line */
  wants?: (lineNumber: number) => boolean;
  /** Keep a "\r" that ends a line (a search that must see lines as ripgrep does). @defaultValue false */
  keepCr?: boolean;
  onLine: LineHandler;
}

/** Feed it with `push(text)` and `end()`; `lines` counts the lines seen. */
export class LineSplitter {
  readonly #maxLineChars: number;
  readonly #wants: (lineNumber: number) => boolean;
  readonly #onLine: LineHandler;
  readonly #keepCr: boolean;
  #lines = 0;
  /** The current line's kept pieces and their length. */
  #parts: string[] = [];
  #kept = 0;
  #cut = 0;
  /** The current line has started (characters were seen since the last line break). */
  #open = false;
  #wanted = false;
  /** The last character seen of the current line was "\r". */
  #lastCr = false;

  constructor(options: LineSplitterOptions) {
    this.#maxLineChars = Math.max(0, options.maxLineChars);
    this.#wants = options.wants ?? (() => true);
    this.#onLine = options.onLine;
    this.#keepCr = options.keepCr ?? false;
  }

  /** Lines ended so far (after `end()`: all lines of the text). */
  get lines(): number {
    return this.#lines;
  }

  /** Takes the next piece of text. */
  push(text: string): void {
    let start = 0;
    while (start < text.length) {
      if (!this.#open) {
        this.#open = true;
        this.#wanted = this.#wants(this.#lines + 1);
      }
      const newline = text.indexOf("\n", start);
      const end = newline === -1 ? text.length : newline;
      if (end > start) {
        if (this.#wanted) this.#take(text, start, end);
        this.#lastCr = text.charCodeAt(end - 1) === 13;
      }
      if (newline === -1) return;
      this.#endLine();
      start = newline + 1;
    }
  }

  /** Ends the text: a last line without a line break counts. */
  end(): void {
    if (this.#open) this.#endLine();
  }

  #take(text: string, start: number, end: number): void {
    const room = this.#maxLineChars - this.#kept;
    const take = Math.min(room, end - start);
    if (take > 0) {
      this.#parts.push(text.slice(start, start + take));
      this.#kept += take;
    }
    this.#cut += end - start - Math.max(0, take);
  }

  #endLine(): void {
    this.#lines++;
    if (this.#wanted) {
      let text = this.#parts.length === 1 ? (this.#parts[0] ?? "") : this.#parts.join("");
      let cut = this.#cut;
      if (this.#lastCr && !this.#keepCr) {
        if (cut > 0) cut--;
        else text = text.slice(0, -1);
      }
      // A cut between the halves of a surrogate pair would leave half a character.
      if (cut > 0 && isHighSurrogate(text.charCodeAt(text.length - 1))) {
        text = text.slice(0, -1);
        cut++;
      }
      this.#onLine(this.#lines, text, cut);
    }
    this.#parts = [];
    this.#kept = 0;
    this.#cut = 0;
    this.#open = false;
    this.#wanted = false;
    this.#lastCr = false;
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
