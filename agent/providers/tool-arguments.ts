/** A tool call's arguments as the native protocols take them: an object, never a JSON string. */

/**
 * The object a tool call's JSON arguments hold: `{}` for none, `{ value }` for JSON that is not an
 * object, and `{ _unparsed: text }` for a model's broken JSON, so it goes back as what it was.
 */
export function toolArguments(text: string): Record<string, unknown> {
  if (!text) return {};
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : { value };
  } catch {
    return { _unparsed: text };
  }
}
