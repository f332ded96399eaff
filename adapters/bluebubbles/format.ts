/**
 * Replies for iMessage: plain text (`markdownToPlainText`; iMessage renders no Markdown), split into
 * messages of at most `BLUEBUBBLES_MAX_CHARS` so a long answer reads as a few bubbles, not one wall.
 */
import { markdownToPlainText } from "../shared/plain-text.js";
import { splitMarkdown } from "../shared/split.js";

/** Characters per message. */
export const BLUEBUBBLES_MAX_CHARS = 4000;

/** The messages one reply becomes, in order. */
export function blueBubblesChunks(markdown: string): string[] {
  return splitMarkdown(markdownToPlainText(markdown), { maxLength: BLUEBUBBLES_MAX_CHARS });
}
