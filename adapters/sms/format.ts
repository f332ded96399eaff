/**
 * Replies for SMS: plain text (`markdownToPlainText`), split into messages of at most `maxChars`
 * (Twilio's 1,600 by default; Twilio cuts each into 153-character GSM or 67-character UCS-2 segments
 * that the phone shows joined again).
 */
import { markdownToPlainText } from "../shared/plain-text.js";
import { splitMarkdown } from "../shared/split.js";

/** The longest body Twilio takes for one message. */
export const SMS_MAX_CHARS = 1600;

/** The messages one reply becomes, in order. */
export function smsChunks(markdown: string, maxChars = SMS_MAX_CHARS): string[] {
  return splitMarkdown(markdownToPlainText(markdown), { maxLength: Math.min(maxChars, SMS_MAX_CHARS) });
}
