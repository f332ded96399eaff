/**
 * Replies for Google Chat: its own text format (`*bold*`, `_italic_`, `~strike~`, `` `code` ``,
 * fenced code, `<url|text>` links), converted from the model's Markdown and split into messages of at
 * most `GOOGLE_CHAT_MAX_CHARS` (Chat's 4,096-character text limit, with room for the conversion).
 * Buttons are a cards v2 card under the text: each row a `buttonList` whose buttons call the app's
 * `heraldButton` function with the button's data and label.
 */
import type { OutboundButton } from "../../core/types.js";
import { splitMarkdown } from "../shared/split.js";
import { BUTTON_FUNCTION, DATA_KEY, LABEL_KEY } from "./parse.js";

/** Characters per message. */
export const GOOGLE_CHAT_MAX_CHARS = 4000;

/** Markdown → Chat's text format, outside code. */
export function toChatText(markdown: string): string {
  return markdown
    .split(/(```[\s\S]*?```|`[^`\n]*`)/g)
    .map((part, i) =>
      i % 2 === 1
        ? part
        : part
            .replace(/\*\*(.+?)\*\*/g, "*$1*")
            .replace(/__(.+?)__/g, "*$1*")
            .replace(/~~(.+?)~~/g, "~$1~")
            .replace(/^#{1,6}\s+(.+)$/gm, "*$1*")
            .replace(/\[([^\]]+)\]\((https?:[^)\s]+)\)/g, "<$2|$1>"),
    )
    .join("");
}

/** The messages one reply becomes, in order (already in Chat's format). */
export function googlechatChunks(markdown: string): string[] {
  return splitMarkdown(markdown, { maxLength: GOOGLE_CHAT_MAX_CHARS }).map(toChatText);
}

/** A cards v2 card with one `buttonList` per row of buttons. */
export function buttonCards(buttons: readonly (readonly OutboundButton[])[]): object[] {
  const widgets = buttons
    .filter((row) => row.length > 0)
    .map((row) => ({
      buttonList: {
        buttons: row.map((b) => ({
          text: b.label.slice(0, 80) || "·",
          onClick: {
            action: {
              function: BUTTON_FUNCTION,
              parameters: [
                { key: DATA_KEY, value: b.data },
                { key: LABEL_KEY, value: b.label },
              ],
            },
          },
        })),
      },
    }));
  return [{ cardId: "herald-buttons", card: { sections: [{ widgets }] } }];
}
