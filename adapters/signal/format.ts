/**
 * Replies for Signal: plain text (Signal renders no Markdown), split into messages of at most
 * `SIGNAL_MAX_CHARS` on paragraph, line or word boundaries. Emphasis markers, heading hashes and link
 * syntax are dropped; code stays as written.
 */
import { splitMarkdown } from "../shared/split.js";

/**
 * Characters per message. Signal sends longer texts as a "long message" attachment that some clients
 * show collapsed; 2000 keeps each reply inline.
 */
export const SIGNAL_MAX_CHARS = 2000;

/** Markdown → plain text, line by line, outside code fences. */
export function plainText(markdown: string): string {
  let fenced = false;
  return markdown
    .split("\n")
    .map((line) => {
      if (/^ {0,3}(```|~~~)/.test(line)) {
        fenced = !fenced;
        return line;
      }
      if (fenced) return line;
      return line
        .replace(/^#{1,6}\s+/, "")
        .replace(/\*\*(.+?)\*\*|__(.+?)__/g, "$1$2")
        .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_, label: string, href: string) =>
          label === href ? href : `${label} (${href})`,
        );
    })
    .join("\n");
}

/** The messages one reply becomes, in order. */
export function signalChunks(markdown: string): string[] {
  return splitMarkdown(plainText(markdown), { maxLength: SIGNAL_MAX_CHARS });
}
