/**
 * Markdown → Matrix message content: `body` keeps the Markdown source (what Matrix clients themselves
 * send as the plain fallback), `formatted_body` is HTML rendered by marked and sanitised to the tags the
 * Matrix spec recommends clients render (no scripts, no event handlers, images only from `mxc://`).
 * Long replies are split with the shared Markdown splitter.
 */
import { Marked } from "marked";
import sanitizeHtml from "sanitize-html";
import type { ChatRef } from "../../core/types.js";
import { splitMarkdown } from "../shared/split.js";

/** Matrix's recommended default for a chunk. @defaultValue 4000 characters */
export const DEFAULT_MAX_MESSAGE_CHARS = 4000;

const marked = new Marked({ gfm: true, breaks: true, async: false });

/** The HTML subset of the Client-Server spec ("m.room.message msgtypes", HTML formatting). */
const SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: [
    "font",
    "del",
    "s",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "blockquote",
    "p",
    "a",
    "ul",
    "ol",
    "sup",
    "sub",
    "li",
    "b",
    "i",
    "u",
    "strong",
    "em",
    "strike",
    "code",
    "hr",
    "br",
    "div",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "caption",
    "pre",
    "span",
    "img",
    "details",
    "summary",
  ],
  allowedAttributes: {
    font: ["data-mx-bg-color", "data-mx-color", "color"],
    span: ["data-mx-bg-color", "data-mx-color", "data-mx-spoiler"],
    a: ["href", "name", "target"],
    img: ["width", "height", "alt", "title", "src"],
    ol: ["start"],
    code: ["class"],
  },
  allowedSchemes: ["https", "http", "ftp", "mailto", "magnet"],
  allowedSchemesByTag: { img: ["mxc"] },
  allowedClasses: { code: ["language-*"] },
  allowProtocolRelative: false,
  // Dropped elements lose their content too when it is code, not text.
  nonTextTags: ["style", "script", "textarea", "option", "noscript", "iframe", "object", "embed"],
};

/** Markdown → sanitised HTML for `formatted_body`. */
export function renderHtml(markdown: string): string {
  const html = marked.parse(markdown) as string;
  return sanitizeHtml(html, SANITIZE).trim();
}

/** The text content of a message: `body` (Markdown source as plain text) and its HTML. */
export interface MatrixText {
  msgtype: "m.text" | "m.notice";
  body: string;
  format: "org.matrix.custom.html";
  formatted_body: string;
}

/** One chunk of Markdown as message content. Notices (status lines, pairing codes) use `m.notice`. */
export function textContent(markdown: string, kind: "reply" | "notice" | "error" = "reply"): MatrixText {
  return {
    msgtype: kind === "notice" ? "m.notice" : "m.text",
    body: markdown,
    format: "org.matrix.custom.html",
    formatted_body: renderHtml(markdown),
  };
}

/**
 * Splits a reply into message-sized Markdown chunks, on paragraph, line or word boundaries, keeping code
 * fences valid. Deterministic for the same text (the outbox resumes at a chunk index).
 */
export function chunkMarkdown(markdown: string, maxChars = DEFAULT_MAX_MESSAGE_CHARS): string[] {
  return splitMarkdown(markdown, { maxLength: maxChars });
}

/**
 * Content that replaces an earlier message (`m.replace`): clients show `m.new_content`; the outer
 * `* text` is the fallback for clients without edit support.
 */
export function editContent(
  eventId: string,
  markdown: string,
  kind: "reply" | "notice" = "notice",
): Record<string, unknown> {
  const inner = textContent(markdown, kind);
  return {
    msgtype: inner.msgtype,
    body: `* ${inner.body}`,
    format: inner.format,
    formatted_body: `* ${inner.formatted_body}`,
    "m.new_content": inner,
    "m.relates_to": { rel_type: "m.replace", event_id: eventId },
    "m.mentions": {},
  };
}

/** `m.relates_to` for chunk content: into the thread, answering `replyTo` or continuing the last chunk. */
export function relationFor(
  chat: ChatRef,
  replyTo: string | undefined,
  previous: string | undefined,
): Record<string, unknown> | undefined {
  if (chat.threadId) {
    return {
      rel_type: "m.thread",
      event_id: chat.threadId,
      is_falling_back: replyTo === undefined,
      "m.in_reply_to": { event_id: replyTo ?? previous ?? chat.threadId },
    };
  }
  return replyTo ? { "m.in_reply_to": { event_id: replyTo } } : undefined;
}
