/**
 * Syntax colours for fenced code blocks: highlight.js's common languages through lowlight, loaded in
 * the background once the UI shows (about 100 ms), so the first frame does not wait for them. Until
 * then, and for languages it does not know, code stays plain.
 */
import type { Theme } from "./theme.js";

/** Colours `code` in `lang`; returns it unchanged when it cannot. Never throws. */
export type Highlighter = (code: string, lang: string | undefined) => string;

interface HastNode {
  type: string;
  value?: string;
  properties?: { className?: string[] | string };
  children?: HastNode[];
}

type Lowlight = {
  registered(lang: string): boolean;
  highlight(lang: string, code: string): HastNode;
};

let lowlight: Lowlight | undefined;
let loading: Promise<boolean> | undefined;

/** Loads the languages once; resolves true when they are ready (false when they could not load). */
export function loadHighlighting(): Promise<boolean> {
  loading ??= import("lowlight")
    .then(({ common, createLowlight }) => {
      lowlight = createLowlight(common) as unknown as Lowlight;
      return true;
    })
    .catch(() => false);
  return loading;
}

/** The highlighter for `theme` (plain without colour, or before the languages are loaded). */
export function createHighlighter(theme: Theme): Highlighter {
  return (code, lang) => {
    const name = lang?.trim().split(/\s/)[0]?.toLowerCase();
    if (!theme.color || !lowlight || !name) return code;
    try {
      if (!lowlight.registered(name)) return code;
      return paint(lowlight.highlight(name, code), theme, undefined);
    } catch {
      return code;
    }
  };
}

/** The tree as text, each piece in its nearest styled class; a style never spans a line break. */
function paint(node: HastNode, theme: Theme, style: ((s: string) => string) | undefined): string {
  if (node.type === "text") {
    const text = node.value ?? "";
    return style ? text.split("\n").map(style).join("\n") : text;
  }
  const names = node.properties?.className;
  const first = (Array.isArray(names) ? names : names ? [names] : []).find((c) => c.startsWith("hljs-"));
  const own = first ? theme.syntax(first.slice(5)) : undefined;
  return (node.children ?? []).map((child) => paint(child, theme, own ?? style)).join("");
}
