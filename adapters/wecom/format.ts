/**
 * Replies for WeCom: app messages of type `markdown` (WeCom renders headings, bold, links, quotes,
 * inline code), each at most 2,048 UTF-8 bytes, so replies are cut by bytes with room to spare.
 */
import { splitMarkdown } from "../shared/split.js";

/** UTF-8 bytes per message (WeCom's markdown limit is 2,048). */
export const WECOM_MAX_BYTES = 2000;

/** How WeCom counts a message's length. */
export const utf8Length = (text: string): number => Buffer.byteLength(text, "utf8");

/** The messages one reply becomes, in order. */
export function wecomChunks(markdown: string): string[] {
  return splitMarkdown(markdown, { maxLength: WECOM_MAX_BYTES, measure: utf8Length });
}
