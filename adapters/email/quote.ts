/**
 * Keeps only the new text of a reply: drops quoted history ("On … wrote:" and everything after it,
 * `>` lines, Outlook's "-----Original Message-----" and "From: … Sent: …" header blocks) and the
 * signature after a "-- " line. HTML-only mail is turned into text first, with the quote containers of
 * common clients left out.
 */
import { convert } from "html-to-text";

/** An attribution line: "On <date>, <name> wrote:" and its translations in common clients. */
const ATTRIBUTION_END = /(wrote|schrieb|a écrit|escribió|ha scritto|schreef|skrev|napisał)\s*:\s*$/i;
const ATTRIBUTION_START = /^(On|Am|Le|El|Il|Op|Den|Dnia|W dniu)\s/;
const ORIGINAL_MESSAGE = /^\s*-{2,}\s*(Original Message|Ursprüngliche Nachricht|Message d'origine)\s*-{2,}/i;
const HEADER_FROM = /^\s*\*?(From|Von|De|Da|Van|Från)\s*:\*?\s/i;
const HEADER_NEXT =
  /^\s*\*?(Sent|Date|Gesendet|Datum|Envoyé|Enviado|Inviato|Verzonden|Skickat|To|An|À|Subject|Betreff|Objet)\s*:/i;
const SIGNATURE = /^-- ?$/;
const OUTLOOK_RULE = /^_{20,}\s*$/;

/** Where the quoted history (or signature) starts in `lines`, or `lines.length` when none. */
function cutIndex(lines: string[]): number {
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const next = lines[i + 1] ?? "";
    if (SIGNATURE.test(line)) return i;
    if (ORIGINAL_MESSAGE.test(line)) return i;
    if (OUTLOOK_RULE.test(line) && HEADER_FROM.test(lines.slice(i + 1).find((l) => l.trim()) ?? "")) return i;
    if (HEADER_FROM.test(line) && lines.slice(i + 1, i + 4).some((l) => HEADER_NEXT.test(l))) return i;
    const trimmed = line.trim();
    if (ATTRIBUTION_START.test(trimmed)) {
      if (ATTRIBUTION_END.test(trimmed)) return i;
      // Clients wrap long attribution lines: "On Mon, 1 Jan 2024 at 10:00, Alice <\nalice@x> wrote:"
      if (ATTRIBUTION_END.test(next.trim()) && !next.trim().startsWith(">")) return i;
    }
  }
  return lines.length;
}

/**
 * The new text of a plain-text reply. When stripping would leave nothing (a mail that is all quote),
 * the whole text is kept so the agent still sees something.
 */
export function stripQuoted(text: string): string {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const unquoted = (kept: string[]) => tidy(kept.filter((line) => !/^\s*>/.test(line)));
  const topPosted = unquoted(lines.slice(0, cutIndex(lines)));
  if (topPosted) return topPosted;
  // Bottom-posted: the answer comes after the attribution line and the `>` quote.
  const attribution = cutIndex(lines);
  const rest = lines.slice(attribution + 1);
  const signature = rest.findIndex((line) => SIGNATURE.test(line));
  const bottomPosted = unquoted(signature < 0 ? rest : rest.slice(0, signature));
  return bottomPosted || text.trim();
}

function tidy(lines: string[]): string {
  return lines
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** Text of an HTML body, without images and without the quote containers of Gmail, Apple Mail, Outlook, Thunderbird. */
export function htmlToText(html: string): string {
  return convert(html, {
    wordwrap: false,
    selectors: [
      { selector: "img", format: "skip" },
      { selector: "blockquote", format: "skip" },
      { selector: "div.gmail_quote", format: "skip" },
      { selector: "div.gmail_signature", format: "skip" },
      { selector: "div.moz-cite-prefix", format: "skip" },
      { selector: "div#divRplyFwdMsg", format: "skip" },
      { selector: "div#appendonsend", format: "skip" },
      { selector: "a", options: { hideLinkHrefIfSameAsText: true } },
    ],
  });
}

/** Subject without reply/forward prefixes and list tags, lowercased: the thread fallback key. */
export function normalizeSubject(subject: string): string {
  let s = subject.trim();
  for (;;) {
    const next = s.replace(/^((re|fwd?|aw|wg|sv|vs|antw|tr|r|rif|odp)(\[\d+\])?\s*:|\[[^\]]*\])\s*/i, "");
    if (next === s) break;
    s = next;
  }
  return s.replace(/\s+/g, " ").toLowerCase();
}

/** True when the subject starts with a reply prefix ("Re:", "AW:", "SV:" …). */
export function hasReplyPrefix(subject: string): boolean {
  return /^\s*(re|aw|sv|vs|antw|r|rif|odp)(\[\d+\])?\s*:/i.test(subject);
}

/** The subject of a reply: "Re: " before the original unless it already is a reply. */
export function replySubject(subject: string): string {
  const s = subject.trim();
  if (!s) return "Re: your message";
  return hasReplyPrefix(s) ? s : `Re: ${s}`;
}
