// Markdown to HTML for the conversation, safe by construction: raw HTML in a message is shown as
// text, links keep only http(s), mailto and the chat's own file links (opened in a new tab without
// the opener or a referrer), images become links (a foreign image would be a request to another site),
// and marked escapes everything else it writes.
import { Marked, Renderer } from "./marked.js";

/** `text` safe inside HTML text and double-quoted attributes. */
export function esc(text) {
  return String(text).replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c],
  );
}

/** The URL `href` may be followed to, or undefined when it is not a safe link. */
export function safeHref(href) {
  if (typeof href !== "string") return undefined;
  const trimmed = href.trim();
  if (trimmed.startsWith("/chat/files/")) return trimmed;
  try {
    const url = new URL(trimmed);
    if (url.protocol === "http:" || url.protocol === "https:" || url.protocol === "mailto:") return url.href;
  } catch {
    // not an absolute URL: relative links lead nowhere useful in a chat
  }
  return undefined;
}

const marked = new Marked({
  gfm: true,
  breaks: true,
  renderer: {
    html(token) {
      return esc(token.text ?? token.raw ?? "");
    },
    link(token) {
      const text = this.parser.parseInline(token.tokens);
      const href = safeHref(token.href);
      if (!href) return text;
      const title = token.title ? ` title="${esc(token.title)}"` : "";
      return `<a href="${esc(href)}"${title} target="_blank" rel="noopener noreferrer nofollow">${text}</a>`;
    },
    image(token) {
      const href = safeHref(token.href);
      const label = esc(token.text || token.href || "image");
      if (!href) return label;
      return `<a href="${esc(href)}" target="_blank" rel="noopener noreferrer nofollow">${label}</a>`;
    },
    table(token) {
      // Tables scroll sideways inside the message instead of widening the page.
      const inner = Renderer.prototype.table.call(this, token);
      return `<div class="table-wrap">${inner}</div>`;
    },
  },
});

/** The HTML of Markdown `text`. */
export function markdown(text) {
  return marked.parse(String(text ?? ""), { async: false });
}

/** `**word**` excerpts of the search (FTS5 snippets) as HTML with `<mark>`. */
export function snippet(text) {
  return esc(text).replace(/\*\*(.+?)\*\*/g, "<mark>$1</mark>");
}

/** An element with attributes and children (strings become text). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat())
    if (c != null) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

/** A rendered Markdown block; its fenced code is coloured once highlight.js has loaded. */
export function mdBlock(text, cls = "md") {
  const el = h("div", { class: cls });
  el.innerHTML = markdown(text);
  if (el.querySelector("pre code[class*='language-']"))
    import("./highlight.js").then((m) => m.colour(el)).catch(() => undefined);
  return el;
}

/** A list of files: images inline, the rest as download links. */
export function fileList(files) {
  if (!files?.length) return null;
  return h(
    "div",
    { class: "files" },
    files.map((f) => {
      const href = safeHref(f.url);
      if (!href) return h("span", {}, f.name);
      if (f.audio)
        return h(
          "span",
          { class: "audio" },
          h("audio", { controls: true, preload: "none", src: href, "aria-label": f.name }),
          h("a", { href, class: "file", download: f.name, rel: "noopener noreferrer" }, `↓ ${f.name}`),
        );
      if (f.inline)
        return h(
          "a",
          { href, target: "_blank", rel: "noopener noreferrer" },
          h("img", { src: href, alt: f.name, loading: "lazy" }),
        );
      return h("a", { href, class: "file", download: f.name, rel: "noopener noreferrer" }, `↓ ${f.name}`);
    }),
  );
}
