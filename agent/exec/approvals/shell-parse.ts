/**
 * A shell-aware splitter, enough to check commands before they run: quotes (single, double, ANSI-C),
 * backslash escapes, comments, the operators `; && || | |& &` and newlines, subshell parentheses,
 * redirections (with here-documents and here-strings), `$(…)`, backticks and `<(…)`/`>(…)`, whose inner
 * commands are parsed recursively. It does not expand variables or globs: `$X` stays the text `$X`,
 * except `$IFS`, which is read as the blank it expands to.
 */

/**
 * One shell word with its quotes removed; `subs` are the scripts of its command substitutions. The flags
 * say what the shell does to the word at run time that its text does not show.
 */
export interface Word {
  text: string;
  subs: Script[];
  /** Holds an expansion outside single quotes (`$x`, `${x}`, `$(…)`, backticks, `$((…))`, `<(…)`). */
  expands?: true;
  /** Holds an unquoted expansion, which the shell splits into words (`$x`, not `"$x"`). */
  splits?: true;
  /** Some of it was quoted or escaped (a quoted here-document delimiter keeps the body literal). */
  quoted?: true;
  /** Holds an unquoted `*`, `?` or `[` (a pattern the shell may replace by file names). */
  glob?: true;
  /** Holds an unquoted `{` (a brace expansion such as `{rm,-rf,/}` when it holds a comma). */
  brace?: true;
}

/** A redirection: `op` as written (`>`, `>>`, `2>` is `>`, `<<`, `<<<`, `&>`), `target` the next word. */
export interface Redirect {
  op: string;
  target: Word;
  /** A here-document's body. */
  body?: string;
}

/** One simple command: its words (command name first) and redirections. */
export interface SimpleCommand {
  words: Word[];
  redirects: Redirect[];
  /**
   * Ended by a `)` that closes no parenthesis: a `case` pattern (`*)`, `start|stop)`), which the shell
   * matches rather than runs (anywhere else such a `)` is a syntax error and nothing runs).
   */
  pattern?: true;
}

/** Commands joined by `|`; pipelines are separated by `;`, `&&`, `||`, `&`, newlines and parentheses. */
export type Pipeline = SimpleCommand[];

/** A parsed command line. */
export interface Script {
  pipelines: Pipeline[];
}

/** Word flags a kind of text sets (see `Word`). */
type WordFlag = "expands" | "splits" | "quoted" | "glob" | "brace";

/** Thrown for input nested deeper than the parser follows. */
export class ShellParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ShellParseError";
  }
}

import { decodeAnsiC } from "./ansi-c.js";

const MAX_DEPTH = 32;
const IFS = /^\$(\{IFS\}|IFS(?![A-Za-z0-9_]))/;
const ARRAY_ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=$/;
const REDIRECT_OPS = ["<<<", "<<-", "<<", "<&", "<>", "<", ">>", ">|", ">&", ">"];

class Parser {
  i = 0;
  readonly pipelines: Pipeline[] = [];
  private pipeline: SimpleCommand[] = [];
  private cmd: SimpleCommand = { words: [], redirects: [] };
  private word: Word | null = null;
  private pendingRedirect: Redirect | null = null;
  private heredocs: { redirect: Redirect; delimiter: string; stripTabs: boolean }[] = [];
  /** The input ended inside a quote, substitution, here-document or line continuation. */
  open = false;

  constructor(
    private readonly src: string,
    private readonly depth: number,
  ) {
    if (depth > MAX_DEPTH) throw new ShellParseError("command nested too deeply to check");
  }

  /** Parses from `this.i` to the end, or to the `)` that closes a substitution when `closing`. */
  parse(closing: boolean): void {
    const s = this.src;
    let parens = 0;
    while (this.i < s.length) {
      const c = s[this.i] as string;
      if (c === " " || c === "\t" || c === "\r") {
        this.endWord();
        this.i++;
      } else if (c === "\n") {
        this.endPipeline();
        this.i++;
        this.readHeredocs();
      } else if (c === "#" && this.word === null) {
        while (this.i < s.length && s[this.i] !== "\n") this.i++;
      } else if (c === "\\") {
        const next = s[this.i + 1];
        if (next === undefined || (next === "\n" && this.i + 2 >= s.length)) this.open = true;
        if (next !== undefined && next !== "\n") this.append(next, "quoted");
        this.i += 2;
      } else if (c === "'") {
        const end = s.indexOf("'", this.i + 1);
        if (end < 0) this.open = true;
        const stop = end < 0 ? s.length : end;
        this.append(s.slice(this.i + 1, stop), "quoted");
        this.i = stop + 1;
      } else if (c === '"') this.readDoubleQuoted();
      else if (c === "`") this.readBackticks();
      else if (c === "$") this.readDollar(false);
      else if (c === "<" || c === ">") this.readAngle();
      else if (c === "&" && s[this.i + 1] === ">") {
        this.endWord();
        this.startRedirect(s.startsWith("&>>", this.i) ? "&>>" : "&>");
      } else if (c === "|" || c === "&" || c === ";") {
        const two = s.slice(this.i, this.i + 2);
        if (two === "||" || two === "&&" || two === ";;") {
          this.endPipeline();
          this.i += 2;
        } else if (two === "|&" || c === "|") {
          this.endCommand();
          this.i += two === "|&" ? 2 : 1;
        } else {
          this.endPipeline();
          this.i++;
        }
      } else if (c === "(" && this.word && ARRAY_ASSIGNMENT.test(this.word.text)) {
        this.readArray(this.word);
      } else if (c === "(") {
        this.endPipeline();
        parens++;
        this.i++;
      } else if (c === ")") {
        if (parens === 0 && !closing) this.markPattern();
        this.endPipeline();
        this.i++;
        if (parens === 0 && closing) return;
        parens = Math.max(0, parens - 1);
      } else {
        this.append(c, c === "{" ? "brace" : "*?[".includes(c) ? "glob" : undefined);
        this.i++;
      }
    }
    // The input ended inside `$(`, an open parenthesis, a here-document or after `|`/`&&`.
    if (closing || parens > 0 || this.heredocs.length > 0) this.open = true;
    if (/(\|\||&&|\|)\s*$/.test(s) && !/\\(\|\||&&|\|)\s*$/.test(s)) this.open = true;
    this.endPipeline();
  }

  private append(text: string, flag?: WordFlag): void {
    this.word ??= { text: "", subs: [] };
    this.word.text += text;
    if (flag) this.word[flag] = true;
  }

  /**
   * A `)` that closes nothing ends a `case` pattern (`*)`, `stop|halt)`): its single words are matched,
   * not run. Anything longer before such a `)` is a syntax error, which runs nothing, and stays a command.
   */
  private markPattern(): void {
    this.endWord();
    for (const cmd of [...this.pipeline, this.cmd])
      if (cmd.words.length === 1 && cmd.redirects.length === 0) cmd.pattern = true;
  }

  /** `name=(a b $(c))`: the elements are words, not commands; their substitutions still run. */
  private readArray(word: Word): void {
    const elements = this.nested(this.i + 1);
    for (const pipeline of elements.pipelines)
      for (const cmd of pipeline) for (const w of cmd.words) word.subs.push(...w.subs);
    this.append("(…)");
  }

  private addSub(script: Script, marker: string, quoted: boolean): void {
    this.expansion(marker, quoted);
    this.word?.subs.push(script);
  }

  /** Appends the text of an expansion; unquoted, the shell splits its value into words. */
  private expansion(text: string, quoted: boolean): void {
    this.append(text, "expands");
    if (!quoted) this.append("", "splits");
  }

  /** Parses a nested `$(`, `<(` or `>(` starting at `from`, up to its closing parenthesis. */
  private nested(from: number): Script {
    const sub = new Parser(this.src, this.depth + 1);
    sub.i = from;
    sub.parse(true);
    this.i = sub.i;
    if (sub.open) this.open = true;
    return { pipelines: sub.pipelines };
  }

  private readDoubleQuoted(): void {
    const s = this.src;
    this.append("", "quoted");
    this.i++;
    while (this.i < s.length && s[this.i] !== '"') {
      const c = s[this.i] as string;
      if (c === "\\") {
        const next = s[this.i + 1] ?? "";
        if (next === "\n") {
          // line continuation
        } else if ('"\\$`'.includes(next)) this.append(next);
        else this.append(c + next);
        this.i += 2;
      } else if (c === "`") this.readBackticks(true);
      else if (c === "$") this.readDollar(true);
      else {
        this.append(c);
        this.i++;
      }
    }
    if (this.i >= s.length) this.open = true;
    this.i++;
  }

  private readBackticks(quoted = false): void {
    const s = this.src;
    let j = this.i + 1;
    let inner = "";
    while (j < s.length && s[j] !== "`") {
      if (s[j] === "\\" && j + 1 < s.length) {
        inner += s[j + 1];
        j += 2;
      } else inner += s[j++];
    }
    if (j >= s.length) this.open = true;
    this.i = j + 1;
    this.addSub(parseWithDepth(inner, this.depth + 1), "`…`", quoted);
  }

  private readDollar(inDoubleQuotes: boolean): void {
    const s = this.src;
    const next = s[this.i + 1];
    if (next === "(" && s[this.i + 2] === "(") {
      // Arithmetic: skip to the matching "))", keep the text.
      let depth = 0;
      let j = this.i + 1;
      for (; j < s.length; j++) {
        if (s[j] === "(") depth++;
        else if (s[j] === ")" && --depth === 0) break;
      }
      if (j >= s.length) this.open = true;
      this.expansion(s.slice(this.i, j + 1), inDoubleQuotes);
      this.i = j + 1;
    } else if (next === "(") {
      this.addSub(this.nested(this.i + 2), "$(…)", inDoubleQuotes);
    } else if (next === "'" && !inDoubleQuotes) {
      this.readAnsiC();
    } else if (!inDoubleQuotes && IFS.test(s.slice(this.i, this.i + 6))) {
      // `rm${IFS}-rf${IFS}/`: $IFS expands to blanks, so it separates words.
      this.endWord();
      this.i += s[this.i + 1] === "{" ? 6 : 4;
    } else if (next === "{") {
      const end = s.indexOf("}", this.i);
      if (end < 0) this.open = true;
      const stop = end < 0 ? s.length : end + 1;
      this.expansion(s.slice(this.i, stop), inDoubleQuotes);
      this.i = stop;
    } else if (next !== undefined && /[A-Za-z0-9_@*#?$!-]/.test(next)) {
      // `$x`, `$1`, `$@`…: the name's characters follow as ordinary text.
      this.expansion("$", inDoubleQuotes);
      this.i++;
    } else {
      this.append("$");
      this.i++;
    }
  }

  private readAnsiC(): void {
    const { text, end } = decodeAnsiC(this.src, this.i + 2);
    if (end > this.src.length) this.open = true;
    this.append(text, "quoted");
    this.i = end;
  }

  private readAngle(): void {
    const s = this.src;
    if (s[this.i + 1] === "(") {
      const marker = s[this.i] === "<" ? "<(…)" : ">(…)";
      this.addSub(this.nested(this.i + 2), marker, false);
      return;
    }
    // `2>file`: a word of digits right before the operator is a file descriptor, not an argument.
    if (this.word && /^\d+$/.test(this.word.text) && this.word.subs.length === 0) this.word = null;
    else this.endWord();
    const op = REDIRECT_OPS.find((o) => s.startsWith(o, this.i)) ?? s[this.i] ?? ">";
    this.startRedirect(op);
  }

  private startRedirect(op: string): void {
    this.pendingRedirect = { op, target: { text: "", subs: [] } };
    this.i += op.length;
  }

  private endWord(): void {
    const word = this.word;
    if (word === null) return;
    this.word = null;
    const redirect = this.pendingRedirect;
    if (redirect) {
      redirect.target = word;
      this.cmd.redirects.push(redirect);
      this.pendingRedirect = null;
      if (redirect.op === "<<" || redirect.op === "<<-")
        this.heredocs.push({ redirect, delimiter: word.text, stripTabs: redirect.op === "<<-" });
    } else this.cmd.words.push(word);
  }

  private endCommand(): void {
    this.endWord();
    this.pendingRedirect = null;
    if (this.cmd.words.length > 0 || this.cmd.redirects.length > 0) this.pipeline.push(this.cmd);
    this.cmd = { words: [], redirects: [] };
  }

  private endPipeline(): void {
    this.endCommand();
    if (this.pipeline.length > 0) this.pipelines.push(this.pipeline);
    this.pipeline = [];
  }

  /** After a newline: the bodies of the here-documents opened on the line just ended. */
  private readHeredocs(): void {
    const s = this.src;
    for (const doc of this.heredocs) {
      const lines: string[] = [];
      let closed = false;
      while (this.i < s.length) {
        const end = s.indexOf("\n", this.i);
        const stop = end < 0 ? s.length : end;
        let line = s.slice(this.i, stop);
        this.i = stop + 1;
        if (doc.stripTabs) line = line.replace(/^\t+/, "");
        if (line === doc.delimiter) {
          closed = true;
          break;
        }
        lines.push(line);
      }
      if (!closed) this.open = true;
      doc.redirect.body = lines.join("\n");
    }
    this.heredocs = [];
  }
}

function parseWithDepth(src: string, depth: number): Script {
  const parser = new Parser(src, depth);
  parser.parse(false);
  return { pipelines: parser.pipelines };
}

/**
 * Splits a command line into pipelines of simple commands.
 * @throws ShellParseError when substitutions nest deeper than 32 levels.
 */
export function parseShell(src: string): Script {
  return parseWithDepth(src, 0);
}

/**
 * Whether a shell reading `src` would still be waiting for more of it: the text ends inside a quote,
 * a substitution, a here-document, an open parenthesis, or after `\`, `|`, `&&` or `||`. Text sent
 * to a shell piece by piece is read as one command line until it ends outside all of these.
 * @throws ShellParseError as `parseShell`
 */
export function endsOpen(src: string): boolean {
  const parser = new Parser(src, 0);
  parser.parse(false);
  return parser.open;
}
