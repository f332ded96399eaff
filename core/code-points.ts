/**
 * String order by UTF-16 code unit, what `<` compares. Names Herald sorts (plugin folders, skills,
 * header names) need an order that is the same everywhere, not a language's: `localeCompare` maps
 * ICU's collation data, ~4.5 MiB resident for the process's life, at its first call.
 */
export function compareCodePoints(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
