/**
 * How the terminal UI styles text: SGR sequences, the 16 basic colours only (every terminal and tmux
 * has them). Without colour (`NO_COLOR`, a dumb terminal) the styles that are not colours stay — bold,
 * faint, italic, underline, inverse — so emphasis, the selection and the cursor still show.
 */

/** A style: text in, styled text out (each call closes what it opened). */
export type Style = (text: string) => string;

/** The UI's styles. */
export interface Theme {
  readonly color: boolean;
  bold: Style;
  dim: Style;
  italic: Style;
  underline: Style;
  strike: Style;
  inverse: Style;
  /** Headings, the prompt marker, links. */
  accent: Style;
  /** The user's own messages. */
  user: Style;
  ok: Style;
  fail: Style;
  warn: Style;
  /** Inline code (with backticks kept when there is no colour to set it apart). */
  code: Style;
  /** Code highlighting by highlight.js class (`keyword`, `string`, …); unknown classes stay plain. */
  syntax(kind: string): Style | undefined;
}

const sgr =
  (open: number | string, close: number): Style =>
  (text) =>
    text ? `\x1b[${open}m${text}\x1b[${close}m` : text;

const plain: Style = (text) => text;

/** Colour numbers of the syntax classes (highlight.js names without `hljs-`). */
const SYNTAX: Record<string, number> = {
  keyword: 35,
  built_in: 36,
  type: 36,
  literal: 33,
  number: 33,
  string: 32,
  regexp: 32,
  comment: 90,
  meta: 90,
  title: 34,
  "title.function": 34,
  "title.class": 34,
  attr: 33,
  attribute: 33,
  variable: 31,
  params: 0,
  symbol: 33,
  tag: 34,
  name: 34,
  "selector-tag": 34,
  addition: 32,
  deletion: 31,
  section: 34,
};

/** Whether to colour: not when `NO_COLOR` is set to anything but empty, nor on a dumb terminal. */
export function colorWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  return !env["NO_COLOR"] && env["TERM"] !== "dumb";
}

/** The theme, with colours or without. */
export function createTheme(color: boolean): Theme {
  const colour = (n: number): Style => (color ? sgr(n, 39) : plain);
  return {
    color,
    bold: sgr(1, 22),
    dim: sgr(2, 22),
    italic: sgr(3, 23),
    underline: sgr(4, 24),
    strike: sgr(9, 29),
    inverse: sgr(7, 27),
    accent: colour(36),
    user: color ? (t) => sgr(1, 22)(sgr(36, 39)(t)) : sgr(1, 22),
    ok: colour(32),
    fail: colour(31),
    warn: colour(33),
    code: color ? sgr(33, 39) : (t) => `\`${t}\``,
    syntax: (kind) => {
      if (!color) return undefined;
      const n = SYNTAX[kind];
      return n ? sgr(n, 39) : undefined;
    },
  };
}
