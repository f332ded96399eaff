/**
 * Markdown → the two parts of an outgoing mail. Email has no practical length limit, so a reply is one
 * message (no chunking): the Markdown itself as the text/plain part (it reads well as plain text) and a
 * simple HTML rendering of it. The HTML is sanitised: raw HTML in the agent's text (which may echo what
 * a mail or a web page said) cannot add scripts, images, styles or forms to the user's inbox.
 */
import { marked } from "marked";
import sanitizeHtml from "sanitize-html";

const STYLE = [
  "body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;font-size:14px;line-height:1.5;color:#222}",
  "pre{background:#f6f8fa;padding:8px 12px;border-radius:4px;overflow:auto}",
  "code{font-family:SFMono-Regular,Consolas,Menlo,monospace;font-size:13px}",
  "table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:4px 8px}",
  "blockquote{margin:0 0 0 8px;padding-left:8px;border-left:3px solid #ccc;color:#555}",
].join("");

/** The text/plain part: the Markdown as written, with normalised line ends. */
export function renderText(markdown: string): string {
  return `${markdown.replace(/\r\n?/g, "\n").trimEnd()}\n`;
}

/** The text/html part: a small standalone document rendering `markdown` (GFM: tables, fences, lists). */
export function renderHtml(markdown: string): string {
  const raw = marked.parse(markdown, { async: false, gfm: true, breaks: true });
  const body = sanitizeHtml(raw, {
    allowedTags: sanitizeHtml.defaults.allowedTags,
    allowedAttributes: { a: ["href", "title"], td: ["align"], th: ["align"] },
    allowedSchemes: ["http", "https", "mailto"],
  });
  return `<!doctype html><html><head><meta charset="utf-8"><style>${STYLE}</style></head><body>${body}</body></html>`;
}
