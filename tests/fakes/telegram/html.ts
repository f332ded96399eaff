/**
 * Parses Telegram's HTML parse mode the way the Bot API does, strictly: only the supported tags, proper
 * nesting, the four named entities and numeric ones, nothing inside `<code>`/`<pre>` but the one
 * `<pre><code class="language-x">` form, no nested blockquotes. Returns the visible text and its
 * entities, or the Bot API's error description ("can't parse entities: ...").
 */

export interface ParsedEntity {
  type: string;
  offset: number;
  length: number;
  url?: string;
  language?: string;
}

export type ParseResult = { ok: true; text: string; entities: ParsedEntity[] } | { ok: false; error: string };

const TAGS: Record<string, string> = {
  b: "bold",
  strong: "bold",
  i: "italic",
  em: "italic",
  u: "underline",
  ins: "underline",
  s: "strikethrough",
  strike: "strikethrough",
  del: "strikethrough",
  "tg-spoiler": "spoiler",
  span: "spoiler",
  a: "text_link",
  code: "code",
  pre: "pre",
  blockquote: "blockquote",
  "tg-emoji": "custom_emoji",
};

const NAMED: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"' };

interface Open {
  tag: string;
  offset: number;
  url?: string;
  language?: string;
}

function fail(error: string): ParseResult {
  return { ok: false, error: `Bad Request: can't parse entities: ${error}` };
}

function attributes(raw: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of raw.matchAll(/([a-zA-Z-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/g)) {
    out[m[1]!.toLowerCase()] = decode(m[2] ?? m[3] ?? m[4] ?? "");
  }
  return out;
}

function decode(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#\d+|[a-z]+);/g, (all, name: string) => {
    if (name.startsWith("#x")) return String.fromCodePoint(Number.parseInt(name.slice(2), 16));
    if (name.startsWith("#")) return String.fromCodePoint(Number(name.slice(1)));
    return NAMED[name] ?? all;
  });
}

/** Parses `html`; byte offsets in errors are UTF-8 offsets into the input, as Telegram reports them. */
export function parseTelegramHtml(html: string): ParseResult {
  let text = "";
  const stack: Open[] = [];
  const entities: ParsedEntity[] = [];
  let i = 0;
  const byteAt = (at: number) => Buffer.byteLength(html.slice(0, at));
  while (i < html.length) {
    const ch = html[i]!;
    if (ch === "&") {
      const m = /^&(#x[0-9a-fA-F]+|#\d+|[a-zA-Z]+);/.exec(html.slice(i, i + 12));
      if (!m || (!m[1]!.startsWith("#") && NAMED[m[1]!] === undefined)) {
        return fail(`Unsupported HTML entity starting at byte offset ${byteAt(i)}`);
      }
      text += decode(m[0]);
      i += m[0].length;
      continue;
    }
    if (ch === ">") return fail(`Unexpected end of tag at byte offset ${byteAt(i)}`);
    if (ch !== "<") {
      text += ch;
      i += 1;
      continue;
    }
    const end = html.indexOf(">", i);
    if (end < 0) return fail(`Unclosed start tag at byte offset ${byteAt(i)}`);
    const inner = html.slice(i + 1, end);
    const closing = inner.startsWith("/");
    const name = (/^\/?([a-zA-Z-]+)/.exec(inner)?.[1] ?? "").toLowerCase();
    const kind = TAGS[name];
    if (!kind) return fail(`Unsupported start tag "${name}" at byte offset ${byteAt(i)}`);
    const top = stack[stack.length - 1];
    if (closing) {
      if (!top || top.tag !== name) {
        return fail(
          `Unmatched end tag at byte offset ${byteAt(i)}, expected "</${top?.tag ?? ""}>", found "</${name}>"`,
        );
      }
      stack.pop();
      const length = text.length - top.offset;
      if (length > 0) {
        const entity: ParsedEntity = { type: TAGS[top.tag]!, offset: top.offset, length };
        if (top.url !== undefined) entity.url = top.url;
        if (top.language !== undefined) entity.language = top.language;
        // `<pre><code class="language-x">` is one pre entity with a language.
        const parent = stack[stack.length - 1];
        if (top.tag === "code" && parent?.tag === "pre") parent.language = top.language;
        else entities.push(entity);
      }
    } else {
      if (top && (top.tag === "code" || (top.tag === "pre" && name !== "code"))) {
        return fail(`Can't use tag "${name}" inside "${top.tag}" at byte offset ${byteAt(i)}`);
      }
      if (name === "blockquote" && stack.some((o) => o.tag === "blockquote")) {
        return fail(`Can't use nested blockquote at byte offset ${byteAt(i)}`);
      }
      const attrs = attributes(inner.slice(name.length));
      const open: Open = { tag: name, offset: text.length };
      if (name === "a") {
        if (!attrs["href"]) return fail(`Can't find URL in the a tag at byte offset ${byteAt(i)}`);
        open.url = attrs["href"];
      }
      if (name === "span" && attrs["class"] !== "tg-spoiler") {
        return fail(`Tag "span" must have class "tg-spoiler" at byte offset ${byteAt(i)}`);
      }
      if (name === "code" && attrs["class"]?.startsWith("language-")) {
        open.language = attrs["class"].slice("language-".length);
      }
      stack.push(open);
    }
    i = end + 1;
  }
  if (stack.length > 0) {
    return fail(`Can't find end tag corresponding to start tag "${stack[stack.length - 1]!.tag}"`);
  }
  return { ok: true, text, entities: entities.sort((a, b) => a.offset - b.offset) };
}
