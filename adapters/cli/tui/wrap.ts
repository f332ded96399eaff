/**
 * Word wrapping of styled text by display columns, quick where text is ASCII (most of it) and exact
 * elsewhere (wide characters, emoji through `string-width`). A style open at a line break is closed at
 * the end of that line and opened again on the next, so every line stands alone (Ink draws lines one
 * by one). A word longer than the width is broken.
 */
import stringWidth from "string-width";

const TOKEN = /(\x1b\[[0-9;]*m)|( +)|([^ \x1b]+|\x1b)/g;
const ASCII = /^[\x20-\x7e]*$/;
const segmenter = new Intl.Segmenter();

/** Columns `text` takes (no escape sequences in it). */
export function displayWidth(text: string): number {
  return ASCII.test(text) ? text.length : stringWidth(text);
}

/**
 * `text` in lines of at most `width` columns. `trim`: spaces at a break go (prose); otherwise leading
 * spaces stay (code, the input).
 */
export function wrapText(text: string, width: number, trim = true): string[] {
  const w = Math.max(1, width);
  const out: string[] = [];
  const active: string[] = [];
  for (const logical of text.replaceAll("\t", "  ").split("\n")) {
    let line = active.join("");
    let cols = 0;
    let spaces = "";
    // Styles met after spaces: they belong before the next word, wherever it lands.
    let codes = "";
    const breakLine = () => {
      line += codes;
      out.push(active.length ? `${line}\x1b[0m` : line);
      line = active.join("");
      cols = 0;
      spaces = "";
      codes = "";
    };
    for (const [, code, gap, word] of logical.matchAll(TOKEN)) {
      if (code) {
        if (spaces) codes += code;
        else line += code;
        track(active, code);
      } else if (gap) {
        spaces += gap;
      } else if (word) {
        const ww = displayWidth(word);
        if (cols + spaces.length + ww <= w) {
          line += spaces + codes + word;
          cols += spaces.length + ww;
          spaces = "";
          codes = "";
          continue;
        }
        if (!trim && cols === 0 && spaces.length < w) {
          // Leading indentation of code stays with the word it indents.
          line += spaces + codes;
          cols = spaces.length;
          spaces = "";
          codes = "";
        } else if (cols > 0) {
          if (!trim && cols + spaces.length <= w) line += spaces;
          breakLine();
        } else {
          line += codes;
          spaces = "";
          codes = "";
        }
        if (ww <= w - cols) {
          line += word;
          cols += ww;
          continue;
        }
        for (const { segment } of segmenter.segment(word)) {
          const cw = displayWidth(segment);
          if (cols + cw > w && cols > 0) breakLine();
          line += segment;
          cols += cw;
        }
      }
    }
    if (!trim && spaces && cols + spaces.length <= w) line += spaces;
    line += codes;
    out.push(active.length ? `${line}\x1b[0m` : line);
  }
  return out;
}

/** Keeps the list of open styles: an opening code is added, a closing one removes what it closes. */
function track(active: string[], code: string): void {
  const n = Number(code.slice(2, -1) || "0");
  const closes: Record<number, (m: number) => boolean> = {
    0: () => true,
    22: (m) => m === 1 || m === 2,
    23: (m) => m === 3,
    24: (m) => m === 4,
    27: (m) => m === 7,
    29: (m) => m === 9,
    39: (m) => (m >= 30 && m <= 38) || (m >= 90 && m <= 97),
    49: (m) => (m >= 40 && m <= 48) || (m >= 100 && m <= 107),
  };
  const close = closes[n];
  if (!close) {
    active.push(code);
    return;
  }
  for (let i = active.length - 1; i >= 0; i--) {
    if (close(Number(active[i]!.slice(2, -1).split(";")[0]))) active.splice(i, 1);
  }
}
