/**
 * Turning what a user typed into a search. The text is reduced to word terms (letters, digits, `_`),
 * so quotes, brackets, `OR`/`NEAR` operators and other FTS5 syntax in a query are plain words, never
 * syntax errors. Stores search for all terms first and fall back to any term when that finds nothing.
 */

/** The word terms of a query, lower-cased, in order, without repeats. At most 32. */
export function queryTerms(query: string): string[] {
  const words = query.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
  return [...new Set(words)].slice(0, 32);
}

/**
 * An FTS5 MATCH expression for `terms`: each a quoted string (so it is never read as an operator),
 * joined by AND (`all`) or OR (`any`). Undefined when there are no terms.
 */
export function ftsExpression(terms: readonly string[], join: "all" | "any"): string | undefined {
  if (terms.length === 0) return undefined;
  return terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(join === "all" ? " AND " : " OR ");
}

/**
 * A short excerpt of `text` around the first occurrence of any term, with the matched terms in `**`.
 * Used where FTS5's `snippet()` is not available (the in-memory store).
 */
export function textSnippet(text: string, terms: readonly string[], maxChars = 120): string {
  const lower = text.toLowerCase();
  let first = -1;
  for (const t of terms) {
    const at = lower.indexOf(t);
    if (at >= 0 && (first < 0 || at < first)) first = at;
  }
  const start = Math.max(0, first - Math.floor(maxChars / 3));
  const end = Math.min(text.length, start + maxChars);
  let excerpt = text.slice(start, end);
  for (const t of terms) {
    excerpt = excerpt.replace(new RegExp(escapeRegExp(t), "giu"), (m) => `**${m}**`);
  }
  return `${start > 0 ? "…" : ""}${excerpt}${end < text.length ? "…" : ""}`;
}

function escapeRegExp(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
