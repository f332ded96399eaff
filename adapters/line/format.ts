/**
 * Replies for LINE: LINE renders no Markdown, so replies are plain text (`markdownToPlainText`), split
 * into text messages of at most `LINE_MAX_CHARS`; buttons become quick-reply postback items on the last
 * message, and a file that is not an image goes out as a flex "file card" with a download button.
 */
import type { messagingApi } from "@line/bot-sdk";
import type { OutboundButton } from "../../core/types.js";
import { markdownToPlainText } from "../shared/plain-text.js";
import { splitMarkdown } from "../shared/split.js";

/** A text message's limit (Messaging API: 5,000 characters). */
export const LINE_MAX_CHARS = 5000;
/** Quick-reply items per message. */
export const LINE_MAX_QUICK_REPLIES = 13;
/** A quick-reply button's label. */
const LABEL_CHARS = 20;

/** The text messages one reply becomes, in order. */
export function lineChunks(markdown: string): string[] {
  return splitMarkdown(markdownToPlainText(markdown), { maxLength: LINE_MAX_CHARS });
}

/** A label cut to LINE's 20 characters. */
export function buttonLabel(label: string): string {
  return label.length <= LABEL_CHARS ? label : `${label.slice(0, LABEL_CHARS - 1)}…`;
}

/** Quick-reply postback items for `buttons` (rows flattened); `encode` fits data into 300 bytes. */
export function quickReply(
  buttons: OutboundButton[][],
  encode: (data: string) => string,
): messagingApi.QuickReply {
  return {
    items: buttons
      .flat()
      .slice(0, LINE_MAX_QUICK_REPLIES)
      .map((b) => ({
        type: "action",
        action: { type: "postback", label: buttonLabel(b.label), data: encode(b.data), displayText: b.label },
      })),
  };
}

/** A flex bubble for a file LINE cannot show inline: its name, a caption, and a download button. */
export function fileCard(name: string, url: string, caption?: string): messagingApi.FlexMessage {
  const body: messagingApi.FlexComponent[] = [
    { type: "text", text: `📎 ${name}`, weight: "bold", wrap: true },
  ];
  if (caption) body.push({ type: "text", text: caption, wrap: true });
  return {
    type: "flex",
    altText: `📎 ${name}`,
    contents: {
      type: "bubble",
      body: { type: "box", layout: "vertical", contents: body },
      footer: {
        type: "box",
        layout: "vertical",
        contents: [{ type: "button", action: { type: "uri", label: "Download", uri: url } }],
      },
    },
  };
}
