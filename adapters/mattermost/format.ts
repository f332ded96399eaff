/**
 * Replies for Mattermost: it renders Markdown itself (bold, lists, tables, fenced code), so the text goes
 * as written, split into posts of at most `MATTERMOST_MAX_CHARS` (the server's post limit) at paragraph,
 * line or word boundaries, with code fences closed and reopened across a split.
 */
import { splitMarkdown } from "../shared/split.js";

/** Characters per post: Mattermost refuses longer messages (`PostMessageMaxRunesV2`). */
export const MATTERMOST_MAX_CHARS = 16383;

/** The posts one reply becomes, in order. */
export function mattermostChunks(markdown: string): string[] {
  return splitMarkdown(markdown, { maxLength: MATTERMOST_MAX_CHARS });
}
