/**
 * A parser of the `Authentication-Results` header (RFC 8601): the authserv-id of the server that wrote
 * it and each method's result with its properties. Comments (nested, with escapes) are dropped first,
 * quoted strings are kept whole (a quoted local part may hold `;` or `=`), and a result that does not
 * follow the grammar is left out rather than guessed at: a sender controls much of what a server copies
 * into this header (the MAIL FROM address, the DKIM domain, comments), so nothing in it may turn into a
 * second result.
 */

/** One method's result, e.g. `dkim=pass header.d=example.com`. */
export interface AuthResult {
  /** Lowercase: `dmarc`, `dkim`, `spf`, `arc`, ... */
  method: string;
  /** Lowercase: `pass`, `fail`, `none`, `softfail`, `temperror`, ... */
  result: string;
  /** `ptype.property` (lowercase) → value as written, quotes removed: `header.d` → `example.com`. */
  props: Map<string, string>;
}

/** A parsed header. */
export interface AuthResults {
  /**
   * Who wrote it, as written (compare case-insensitively). Empty when the header starts with a result
   * instead (Microsoft 365 writes it so).
   */
  authservId: string;
  results: AuthResult[];
  /** Set when the header does not follow the grammar (its results are then empty): what is wrong. */
  malformed?: string | undefined;
}

/** A part that starts with `method=` or `method/1=`. */
const RESULT_FIRST = /^[\w.-]+\s*(\/\s*\d+\s*)?=/;

/**
 * Parses one header value (what follows `Authentication-Results:`; folded or not). Never throws: a
 * header off the grammar comes back with `malformed` set, no results, and the authserv-id its first
 * word names (so it still hides the headers below it that claim the same name).
 */
export function parseAuthResults(value: string): AuthResults {
  const unfolded = value.replace(/\r?\n[ \t]+/g, " ");
  const bad = (malformed: string): AuthResults => ({
    authservId: leadingId(unfolded),
    results: [],
    malformed,
  });
  const text = stripComments(unfolded);
  const parts = text === undefined ? undefined : splitOutsideQuotes(text, ";");
  if (parts === undefined) return bad("a comment or quoted string is not closed");
  const head = (parts[0] ?? "").trim();
  let authservId = "";
  const resinfos = parts.slice(1);
  if (RESULT_FIRST.test(head)) {
    // No authserv-id: the first part is already a result.
    resinfos.unshift(head);
  } else {
    const scan = new Scanner(head);
    const id = scan.value();
    scan.skipSpace();
    scan.match(/^\d+/); // authres-version
    scan.skipSpace();
    if (!id || !scan.done()) return bad("no authserv-id before the first ';'");
    authservId = id;
  }
  const results: AuthResult[] = [];
  for (const part of resinfos) {
    if (part.trim().toLowerCase() === "none") continue;
    const result = parseResinfo(part);
    if (result) results.push(result);
  }
  return { authservId, results };
}

/** The first word of a header value that may be off the grammar ("" when it starts with a result). */
function leadingId(value: string): string {
  const word = /^\s*(?:\([^)]*\)\s*)*("(?:[^"\\]|\\.)*"|[^\s;(]+)/.exec(value)?.[1] ?? "";
  if (RESULT_FIRST.test(word)) return "";
  return word.startsWith('"') ? word.slice(1, -1).replace(/\\(.)/g, "$1") : word;
}

/** `method[/version] = result [reason=value] [ptype.property=value ...]`, or undefined when malformed. */
function parseResinfo(part: string): AuthResult | undefined {
  const scan = new Scanner(part);
  scan.skipSpace();
  const method = scan.keyword();
  if (!method) return undefined;
  scan.skipSpace();
  if (scan.match(/^\//)) {
    scan.skipSpace();
    if (!scan.match(/^\d+/)) return undefined;
    scan.skipSpace();
  }
  if (!scan.match(/^=/)) return undefined;
  scan.skipSpace();
  const result = scan.keyword();
  if (!result) return undefined;
  const props = new Map<string, string>();
  for (;;) {
    scan.skipSpace();
    if (scan.done()) break;
    const ptype = scan.keyword();
    if (!ptype) return undefined;
    scan.skipSpace();
    let name = ptype.toLowerCase();
    if (scan.match(/^\./)) {
      scan.skipSpace();
      const property = scan.keyword();
      if (!property) return undefined;
      name = `${name}.${property.toLowerCase()}`;
      scan.skipSpace();
    }
    if (!scan.match(/^=/)) return undefined;
    scan.skipSpace();
    const value = scan.value();
    if (value === undefined) return undefined;
    // The first of a repeated property counts; a later one cannot override what the server wrote first.
    if (!props.has(name)) props.set(name, value);
  }
  return { method: method.toLowerCase(), result: result.toLowerCase(), props };
}

/** A cursor over one part of the header. */
class Scanner {
  private rest: string;

  constructor(text: string) {
    this.rest = text;
  }

  done(): boolean {
    return this.rest.length === 0;
  }

  skipSpace(): void {
    this.rest = this.rest.replace(/^\s+/, "");
  }

  /** Consumes and returns what `pattern` (anchored) matches, or undefined. */
  match(pattern: RegExp): string | undefined {
    const m = pattern.exec(this.rest);
    if (!m) return undefined;
    this.rest = this.rest.slice(m[0].length);
    return m[0];
  }

  /** A keyword: letters, digits, `-` and `_`. */
  keyword(): string | undefined {
    return this.match(/^[A-Za-z0-9][\w-]*/);
  }

  /**
   * A value up to the next space: tokens and quoted strings side by side (`"a b"@example.com` is one
   * value), quotes removed and escapes resolved.
   */
  value(): string | undefined {
    let out = "";
    let any = false;
    for (;;) {
      const quoted = this.match(/^"(?:[^"\\]|\\.)*"/);
      if (quoted !== undefined) {
        out += quoted.slice(1, -1).replace(/\\(.)/g, "$1");
        any = true;
        continue;
      }
      const plain = this.match(/^[^\s";]+/);
      if (plain === undefined) break;
      out += plain;
      any = true;
    }
    return any ? out : undefined;
  }
}

/** The text with every comment replaced by a space; undefined when a comment or quote is not closed. */
function stripComments(text: string): string | undefined {
  let out = "";
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "\\" && (quoted || depth > 0)) {
      if (depth === 0) out += text.slice(i, i + 2);
      i++;
      continue;
    }
    if (depth > 0) {
      if (c === "(") depth++;
      else if (c === ")") depth--;
      if (depth === 0) out += " ";
      continue;
    }
    if (quoted) {
      if (c === '"') quoted = false;
      out += c;
      continue;
    }
    if (c === '"') quoted = true;
    if (c === "(") {
      depth = 1;
      continue;
    }
    out += c;
  }
  return depth === 0 && !quoted ? out : undefined;
}

/** Splits at `separator` outside quoted strings (comments are gone by now). */
function splitOutsideQuotes(text: string, separator: string): string[] | undefined {
  const parts: string[] = [];
  let current = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted && c === "\\") {
      current += text.slice(i, i + 2);
      i++;
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (c === separator && !quoted) {
      parts.push(current);
      current = "";
      continue;
    }
    current += c;
  }
  parts.push(current);
  return quoted ? undefined : parts;
}
