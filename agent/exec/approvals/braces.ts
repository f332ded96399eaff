/** Bash's brace expansion of comma lists, so `{rm,-rf,/}` reads as the three words it becomes. */

const MAX_WORDS = 256;

/** The first `{…}` of `text` at nesting depth 0 that holds a comma at its own depth, with its parts. */
function firstList(text: string): { start: number; end: number; parts: string[] } | undefined {
  for (let start = text.indexOf("{"); start >= 0; start = text.indexOf("{", start + 1)) {
    let depth = 0;
    const commas: number[] = [];
    for (let j = start; j < text.length; j++) {
      const c = text[j];
      if (c === "{") depth++;
      else if (c === "}" && --depth === 0) {
        if (commas.length === 0) break;
        const cuts = [start, ...commas, j];
        const parts = cuts.slice(1).map((cut, k) => text.slice((cuts[k] as number) + 1, cut));
        return { start, end: j, parts };
      } else if (c === "," && depth === 1) commas.push(j);
    }
  }
  return undefined;
}

/**
 * The words an unquoted word with braces becomes: `{rm,-rf,/x}` → `rm -rf /x`, `a{b,c}d` → `abd acd`
 * (nested lists too). Sequences (`{1..3}`) and braces without a comma stay as written. Undefined when
 * nothing expands, or past 256 words (the caller keeps the word as written).
 */
export function expandBraces(text: string): string[] | undefined {
  if (!firstList(text)) return undefined;
  let words = [text];
  for (let round = 0; round < MAX_WORDS; round++) {
    let changed = false;
    const next: string[] = [];
    for (const word of words) {
      const list = firstList(word);
      if (!list) {
        next.push(word);
        continue;
      }
      changed = true;
      const head = word.slice(0, list.start);
      const tail = word.slice(list.end + 1);
      for (const part of list.parts) next.push(head + part + tail);
    }
    if (next.length > MAX_WORDS) return undefined;
    words = next;
    if (!changed) return words;
  }
  return undefined;
}
