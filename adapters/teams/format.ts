/**
 * Replies for Teams: messages go as Markdown (`textFormat: "markdown"`; Teams renders bold, italics,
 * lists, links and code), split into messages of at most `TEAMS_MAX_CHARS` (well inside Teams' ~28 KB
 * message limit) with code fences closed and reopened across a split. A message with buttons is an
 * Adaptive Card: its text in a TextBlock, each row of buttons an ActionSet of Action.Submit whose
 * `data` carries the button's data back in the click.
 */
import type { OutboundButton } from "../../core/types.js";
import { splitMarkdown } from "../shared/split.js";
import { BUTTON_KEY, LABEL_KEY } from "./parse.js";
import type { OutAttachment } from "./types.js";

/** Characters per message. */
export const TEAMS_MAX_CHARS = 6000;

/** The content type of an Adaptive Card attachment. */
export const ADAPTIVE_CARD = "application/vnd.microsoft.card.adaptive";

/** The messages one reply becomes, in order. */
export function teamsChunks(markdown: string): string[] {
  return splitMarkdown(markdown, { maxLength: TEAMS_MAX_CHARS });
}

/** An Adaptive Card showing `text` with rows of buttons under it. */
export function buttonCard(text: string, buttons: readonly (readonly OutboundButton[])[]): OutAttachment {
  const rows = buttons
    .filter((row) => row.length > 0)
    .map((row) => ({
      type: "ActionSet",
      actions: row.map((b) => ({
        type: "Action.Submit",
        title: b.label.slice(0, 80) || "·",
        data: { [BUTTON_KEY]: b.data, [LABEL_KEY]: b.label },
      })),
    }));
  return {
    contentType: ADAPTIVE_CARD,
    content: {
      type: "AdaptiveCard",
      $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
      version: "1.4",
      msteams: { width: "Full" },
      body: [{ type: "TextBlock", text, wrap: true }, ...rows],
    },
  };
}
