/** What both search backends bound the same way: the files searched, and the text a hit keeps. */

/** Content search skips files larger than this (ripgrep would buffer a 1 GB line whole). */
export const MAX_CONTENT_BYTES = 50 * 1024 * 1024;

/** Characters of a matching line shown; longer lines end with a marker. */
export const MAX_HIT_LINE_CHARS = 300;

/**
 * The shown part of a matching line, in a string of its own: a slice would keep the whole chunk or
 * file it was cut from alive for as long as the hit (thousands of hits, each holding a megabyte).
 */
export function hitText(line: string): string {
  const text = line.endsWith("\r") ? line.slice(0, -1) : line;
  if (text.length > MAX_HIT_LINE_CHARS) return `${detach(text.slice(0, MAX_HIT_LINE_CHARS))} … [line cut]`;
  return detach(text);
}

/** A flat copy of `text` (V8 flattens a concatenation before slicing it, into a new string). */
function detach(text: string): string {
  return ` ${text}`.slice(1);
}
