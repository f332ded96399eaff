/**
 * Replies for Feishu / Lark: every message is an interactive card with one `markdown` element (cards
 * render bold, italics, links, lists and code, and only cards can be patched in place, which streamed
 * replies and tool progress need), and an `action` element of buttons when the message has them.
 * Headings, which card Markdown lacks, become bold lines. Text is cut into cards of at most
 * `FEISHU_MAX_CHARS` characters (a card's JSON may not pass 30 KB).
 */
import type { KeyValueStore, OutboundButton } from "../../core/types.js";
import { encodeButtonData } from "../shared/button-data.js";
import { splitMarkdown } from "../shared/split.js";

/** Characters per card: 4,000 three-byte characters stay well inside the 30 KB card limit. */
export const FEISHU_MAX_CHARS = 4000;
/** Bytes a button's value keeps inline; longer data goes by id through the adapter's store. */
const MAX_VALUE_BYTES = 1000;

/** The Markdown a card shows. */
export function toCardMarkdown(markdown: string): string {
  return markdown.replace(/^#{1,6}[ \t]+(.+?)[ \t]*#*$/gm, "**$1**");
}

/** The cards one reply becomes, as Markdown, in order. */
export function feishuChunks(markdown: string): string[] {
  return splitMarkdown(toCardMarkdown(markdown), { maxLength: FEISHU_MAX_CHARS });
}

/** A card's JSON (`msg_type: interactive` content) with `markdown` and, optionally, rows of buttons. */
export function card(
  markdown: string,
  buttons: readonly (readonly OutboundButton[])[] = [],
  kv?: KeyValueStore,
): string {
  const elements: object[] = [{ tag: "markdown", content: markdown || " " }];
  for (const row of buttons) {
    if (row.length === 0 || !kv) continue;
    elements.push({
      tag: "action",
      actions: row.map((b) => ({
        tag: "button",
        text: { tag: "plain_text", content: b.label.slice(0, 40) || "·" },
        type: "default",
        value: { herald: encodeButtonData(b.data, kv, MAX_VALUE_BYTES), label: b.label.slice(0, 40) },
      })),
    });
  }
  return JSON.stringify({ config: { wide_screen_mode: true, update_multi: true }, elements });
}
