/**
 * Function lengths of a TypeScript file without a parser: a small tokenizer (comments, strings,
 * template literals and regular expressions are skipped; template expressions are code) and a brace
 * scan. A `{` opens a function body when it follows `=>`, or a `)` whose `(` does not follow `if`,
 * `for`, `while`, `switch`, `catch` or `with`, or a return type after such a `)` (`): Promise<T> {`).
 * A function's length is the lines from its body's `{` to its `}`, nested functions included.
 * Used by check-imports.mjs; fast enough to run on every `npm run check` (the whole tree in ~0.2 s).
 */

const BEFORE_REGEX = new Set([
  "return",
  "typeof",
  "case",
  "in",
  "of",
  "new",
  "delete",
  "void",
  "throw",
  "instanceof",
  "yield",
  "await",
  "else",
  "do",
]);
const BLOCK_KEYWORDS = new Set(["if", "for", "while", "switch", "catch", "with"]);
const STOP_WORDS = new Set([
  "class",
  "interface",
  "extends",
  "implements",
  "return",
  "type",
  "enum",
  "namespace",
]);
const OPENER = { ")": "(", "]": "[", "}": "{", ">": "<" };
const NAME = /^[A-Za-z_$#][\w$]*$/;

/** `{ t, line }` per punctuation mark and word; a string, template or regex is one `str` or `re`. */
function tokenize(src) {
  const out = [];
  const n = src.length;
  /** Brace depths at which a template's `${` was opened. */
  const templates = [];
  let i = 0;
  let line = 1;
  let depth = 0;
  const regexAllowed = () => {
    const p = out.at(-1);
    if (!p) return true;
    if (/^[\w$]/.test(p.t)) return BEFORE_REGEX.has(p.t);
    return p.t !== ")" && p.t !== "]" && p.t !== "}" && p.t !== "str" && p.t !== "re";
  };
  /** Reads template text up to its closing backtick or the next `${`. */
  const readTemplate = () => {
    while (i < n) {
      const c = src[i];
      if (c === "\\") {
        if (src[i + 1] === "\n") line++;
        i += 2;
        continue;
      }
      if (c === "\n") line++;
      if (c === "`") {
        i++;
        return;
      }
      if (c === "$" && src[i + 1] === "{") {
        i += 2;
        templates.push(depth++);
        out.push({ t: "(", line });
        return;
      }
      i++;
    }
  };
  while (i < n) {
    const c = src[i];
    if (c === "\n") {
      line++;
      i++;
    } else if (c === " " || c === "\t" || c === "\r") i++;
    else if (c === "/" && src[i + 1] === "/") {
      while (i < n && src[i] !== "\n") i++;
    } else if (c === "/" && src[i + 1] === "*") {
      const end = src.indexOf("*/", i + 2) < 0 ? n : src.indexOf("*/", i + 2) + 2;
      for (let k = i; k < end; k++) if (src[k] === "\n") line++;
      i = end;
    } else if (c === '"' || c === "'") {
      for (i++; i < n && src[i] !== c; i++) if (src[i] === "\\") i++;
      i++;
      out.push({ t: "str", line });
    } else if (c === "`") {
      i++;
      readTemplate();
      out.push({ t: "str", line });
    } else if (c === "/" && regexAllowed()) {
      let inClass = false;
      for (i++; i < n && src[i] !== "\n"; i++) {
        if (src[i] === "\\") i++;
        else if (inClass) inClass = src[i] !== "]";
        else if (src[i] === "[") inClass = true;
        else if (src[i] === "/") break;
      }
      for (i++; i < n && /[a-z]/.test(src[i]); ) i++;
      out.push({ t: "re", line });
    } else if (/[\w$#@]/.test(c)) {
      let j = i + 1;
      while (j < n && /[\w$]/.test(src[j])) j++;
      out.push({ t: src.slice(i, j), line });
      i = j;
    } else if (c === "=" && src[i + 1] === ">") {
      out.push({ t: "=>", line });
      i += 2;
    } else if (c === "{") {
      depth++;
      out.push({ t: "{", line });
      i++;
    } else if (c === "}") {
      depth--;
      i++;
      if (templates.at(-1) === depth) {
        templates.pop();
        out.push({ t: ")", line });
        readTemplate();
      } else out.push({ t: "}", line });
    } else {
      out.push({ t: c, line });
      i++;
    }
  }
  return out;
}

/** Index of the token that opens the bracket closed at `k`, or -1. */
function openerOf(tok, k) {
  const close = tok[k].t;
  let d = 0;
  for (let j = k; j >= 0; j--) {
    if (tok[j].t === close) d++;
    else if (tok[j].t === OPENER[close] && --d === 0) return j;
  }
  return -1;
}

/** The function whose parameter list closes at `close`, or undefined for `if (…)` and the like. */
function afterParams(tok, close) {
  const open = openerOf(tok, close);
  let j = open - 1;
  if (tok[j]?.t === ">") j = openerOf(tok, j) - 1;
  const before = tok[j]?.t;
  if (open < 0 || !before || BLOCK_KEYWORDS.has(before)) return undefined;
  if (before === "function" || before === "*") {
    const k = before === "*" ? j - 1 : j;
    return { name: tok[k - 1]?.t === "=" ? tok[k - 2]?.t : "function" };
  }
  return NAME.test(before) ? { name: before } : undefined;
}

/** The name an arrow function is bound to (`const name = (…) =>`, `name: (…) =>`), else "(arrow)". */
function arrowName(tok, arrow) {
  let j = arrow - 1;
  if (tok[j]?.t !== ")") {
    // `(x): T =>` or `x =>`: the parameters' `)` is before the annotation; a bare parameter is one word.
    let d = 0;
    for (; j >= 0; j--) {
      const t = tok[j].t;
      if (t === ")" && d === 0) break;
      if (t === ")" || t === "]" || t === "}" || t === ">") d++;
      else if (t === "(" || t === "[" || t === "{" || t === "<") d--;
      else if (j === arrow - 1 && NAME.test(t)) break;
    }
  }
  let b = (tok[j]?.t === ")" ? openerOf(tok, j) : j) - 1;
  if (tok[b]?.t === "async") b--;
  if (tok[b]?.t !== "=" && tok[b]?.t !== ":") return "(arrow)";
  if (tok[b - 1]?.t === ">") return tok[openerOf(tok, b - 1) - 1]?.t ?? "(arrow)";
  return NAME.test(tok[b - 1]?.t ?? "") ? tok[b - 1].t : "(arrow)";
}

/** The function a `{` at `k` opens, or undefined for any other block or literal. */
function functionAt(tok, k) {
  const p = tok[k - 1]?.t;
  if (p === "=>") return { name: arrowName(tok, k - 1) };
  if (p === ")") return afterParams(tok, k - 1);
  // A return type: back to `):` at the same depth.
  let d = 0;
  for (let j = k - 1; j >= 0 && k - j < 80; j--) {
    const t = tok[j].t;
    if (t === ")" || t === "]" || t === "}" || t === ">") d++;
    else if (t === "(" || t === "[" || t === "{" || t === "<") {
      if (d-- === 0) return undefined;
    } else if (d === 0) {
      if (t === ":") return tok[j - 1]?.t === ")" ? afterParams(tok, j - 1) : undefined;
      if (t === ";" || t === "=" || t === "," || STOP_WORDS.has(t)) return undefined;
    }
  }
  return undefined;
}

/** Every function of `src`: its name, the lines of its body's braces and its length in lines. */
export function functionLengths(src) {
  const tok = tokenize(src);
  const open = [];
  const found = [];
  for (let k = 0; k < tok.length; k++) {
    if (tok[k].t === "{") {
      const fn = functionAt(tok, k);
      open.push(fn && { ...fn, start: tok[k].line });
    } else if (tok[k].t === "}") {
      const fn = open.pop();
      if (fn) found.push({ name: fn.name, start: fn.start, lines: tok[k].line - fn.start + 1 });
    }
  }
  return found;
}
