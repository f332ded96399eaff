/**
 * Replies for DingTalk: robot messages of the `sampleMarkdown` template (DingTalk renders headings,
 * bold, links, lists, quotes, images), titled with the start of the text (shown in notifications), at
 * most `DINGTALK_MAX_CHARS` characters each. Buttons make the message an interactive card
 * (`StandardCard`: the Markdown, then one `request` button per choice).
 */
import type { KeyValueStore, OutboundButton } from "../../core/types.js";
import { encodeButtonData } from "../shared/button-data.js";
import { splitMarkdown } from "../shared/split.js";

/** Characters per message: DingTalk's markdown messages take about 5,000. */
export const DINGTALK_MAX_CHARS = 4000;

/** The messages one reply becomes, in order. */
export function dingtalkChunks(markdown: string): string[] {
  return splitMarkdown(markdown, { maxLength: DINGTALK_MAX_CHARS });
}

/** A notification title: the first line without Markdown marks, at most 20 characters. */
export function titleOf(markdown: string): string {
  const first = markdown.split("\n").find((l) => l.trim()) ?? "Herald";
  return (
    first
      .replace(/[#*_`>[\]]/g, "")
      .trim()
      .slice(0, 20) || "Herald"
  );
}

/** `msgParam` of a `sampleMarkdown` message. */
export const markdownParam = (text: string): string => JSON.stringify({ title: titleOf(text), text });

/** A `StandardCard`'s data: the Markdown and a button per choice (action id = the button's data). */
export function cardData(
  markdown: string,
  buttons: readonly (readonly OutboundButton[])[],
  kv?: KeyValueStore,
): string {
  const contents: object[] = [{ type: "markdown", text: markdown, id: "text" }];
  const actions = kv
    ? buttons.flat().map((b) => ({
        type: "button",
        label: { type: "text", text: b.label.slice(0, 20) || "·" },
        actionType: "request",
        status: "normal",
        id: encodeButtonData(b.data, kv, 64),
        params: { label: b.label.slice(0, 40) },
      }))
    : [];
  if (actions.length > 0) contents.push({ type: "action", actions, id: "actions" });
  return JSON.stringify({ config: { autoLayout: true, enableForward: true }, contents });
}
