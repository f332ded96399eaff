/**
 * The environment of a stdio MCP server: a small safe base of Herald's own (what programs need to
 * run: PATH, HOME, locale, temp folder) plus what its config entry gives. Nothing else of Herald's
 * environment reaches it: no model key, no bot token.
 */

/** The variables a stdio server inherits from Herald when set. */
export const SAFE_ENV_KEYS: readonly string[] = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "TERM",
  "LANG",
  "LANGUAGE",
  "LC_ALL",
  "LC_CTYPE",
  "TZ",
  "TMPDIR",
  "TEMP",
  "TMP",
];

/** The safe base of `parent` with `given` over it. */
export function stdioEnvironment(
  given: Readonly<Record<string, string>>,
  parent: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of SAFE_ENV_KEYS) {
    const value = parent[key];
    // A function exported by bash ("() { …") is a way to run code in the child: never passed on.
    if (value !== undefined && !value.startsWith("()")) env[key] = value;
  }
  return { ...env, ...given };
}
