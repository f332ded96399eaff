/**
 * Keys out of a terminal's raw input. Terminals send each key (and each escape sequence) in one write,
 * so a chunk that is exactly ESC is the Escape key, at once, with no timeout; bracketed paste arrives
 * between `ESC[200~` and `ESC[201~` and may span chunks.
 */

/** One key, or a run of typed or pasted text (`name` "text" or "paste"). */
export interface Key {
  name: string;
  text?: string | undefined;
  ctrl?: boolean | undefined;
  meta?: boolean | undefined;
  shift?: boolean | undefined;
}

const CSI_FINAL: Record<string, string> = {
  A: "up",
  B: "down",
  C: "right",
  D: "left",
  H: "home",
  F: "end",
  Z: "tab",
};
const CSI_TILDE: Record<string, string> = {
  "1": "home",
  "2": "insert",
  "3": "delete",
  "4": "end",
  "5": "pageup",
  "6": "pagedown",
  "7": "home",
  "8": "end",
};
const CSI_U: Record<string, string> = { "9": "tab", "13": "return", "27": "escape", "127": "backspace" };

const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";

/** A parser keeping what spans chunks (a paste in progress). */
export class KeyParser {
  private paste: string | undefined;

  /** The keys in one chunk of input. */
  feed(chunk: string): Key[] {
    const keys: Key[] = [];
    let rest = chunk;
    while (rest.length > 0) {
      if (this.paste !== undefined) {
        const end = rest.indexOf(PASTE_END);
        if (end < 0) {
          this.paste += rest;
          break;
        }
        keys.push({ name: "paste", text: normaliseNewlines(this.paste + rest.slice(0, end)) });
        this.paste = undefined;
        rest = rest.slice(end + PASTE_END.length);
        continue;
      }
      if (rest.startsWith(PASTE_START)) {
        this.paste = "";
        rest = rest.slice(PASTE_START.length);
        continue;
      }
      const [key, used] = next(rest);
      if (key) keys.push(key);
      rest = rest.slice(used);
    }
    return keys;
  }
}

/** Pasted text without a bracket: several lines in one chunk are a paste, not Enter presses. */
export function looksPasted(chunk: string): boolean {
  const body = chunk.replace(/\r?\n$|\r$/, "");
  return !chunk.startsWith("\x1b") && /[\r\n]/.test(body) && /[^\r\n]/.test(body);
}

function normaliseNewlines(text: string): string {
  return text.replace(/\r\n?/g, "\n");
}

/** The first key of `s` and how many characters it used. */
function next(s: string): [Key | undefined, number] {
  const c = s[0]!;
  if (c === "\x1b") return escaped(s);
  if (c === "\r") return [{ name: "return" }, 1];
  if (c === "\n") return [{ name: "enter" }, 1];
  if (c === "\t") return [{ name: "tab" }, 1];
  if (c === "\x7f" || c === "\b") return [{ name: "backspace" }, 1];
  const code = c.charCodeAt(0);
  if (code >= 1 && code <= 26) return [{ name: String.fromCharCode(code + 96), ctrl: true }, 1];
  if (code < 32) return [undefined, 1];
  // A run of printable text is one key: a word typed by a program arrives as one chunk.
  let end = 1;
  while (end < s.length && s.charCodeAt(end) >= 32 && s[end] !== "\x7f") end++;
  return [{ name: "text", text: s.slice(0, end) }, end];
}

function escaped(s: string): [Key | undefined, number] {
  if (s.length === 1) return [{ name: "escape" }, 1];
  const second = s[1]!;
  if (second === "[") return csi(s);
  if (second === "O" && s.length > 2) {
    const name = CSI_FINAL[s[2]!];
    return [name ? { name } : undefined, 3];
  }
  if (second === "\x1b") return [{ name: "escape" }, 1];
  // Alt (meta) with a key: Alt+Enter, Alt+Backspace, Alt+b …
  const [key, used] = next(s.slice(1));
  return [key ? { ...key, meta: true } : undefined, used + 1];
}

/** `ESC [ params final`, with xterm's modifier parameter (`1;5C` is Ctrl+Right). */
function csi(s: string): [Key | undefined, number] {
  const match = /^\x1b\[([0-9;:]*)([\x40-\x7e])/.exec(s);
  if (!match) return [undefined, s.length];
  const [all, params, final] = match as unknown as [string, string, string];
  const [first = "", mod = "1"] = params.split(";");
  const bits = Math.max(0, Number.parseInt(mod, 10) - 1);
  const mods = { shift: (bits & 1) !== 0, meta: (bits & 2) !== 0, ctrl: (bits & 4) !== 0 };
  let name: string | undefined;
  if (final === "~") name = CSI_TILDE[first];
  else if (final === "u") name = CSI_U[first] ?? (first ? String.fromCodePoint(Number(first)) : undefined);
  else name = CSI_FINAL[final];
  if (final === "Z") mods.shift = true;
  return [name ? { name, ...mods } : undefined, all.length];
}
