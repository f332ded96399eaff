/** Bash's ANSI-C quoting (`$'…'`), decoded so `$'\x72m'` reads as `rm`. */

const ESCAPES: Record<string, string> = {
  n: "\n",
  t: "\t",
  r: "\r",
  "\\": "\\",
  "'": "'",
  '"': '"',
  a: "\x07",
  e: "\x1b",
};

/**
 * Decodes an ANSI-C quoted string whose body starts at `from` (just after `$'`): `\n`, `\t`, `\xHH`,
 * octal `\NNN` and the other common escapes. Returns the text and the index after the closing quote.
 */
export function decodeAnsiC(src: string, from: number): { text: string; end: number } {
  let j = from;
  let text = "";
  while (j < src.length && src[j] !== "'") {
    if (src[j] !== "\\") {
      text += src[j++];
      continue;
    }
    const e = src[j + 1] ?? "";
    const hex = /^x([0-9a-fA-F]{1,2})/.exec(src.slice(j + 1, j + 4));
    const oct = /^([0-7]{1,3})/.exec(src.slice(j + 1, j + 4));
    if (hex?.[1]) {
      text += String.fromCharCode(Number.parseInt(hex[1], 16));
      j += 2 + hex[1].length;
    } else if (oct?.[1]) {
      text += String.fromCharCode(Number.parseInt(oct[1], 8));
      j += 1 + oct[1].length;
    } else {
      text += ESCAPES[e] ?? `\\${e}`;
      j += 2;
    }
  }
  return { text, end: j + 1 };
}
