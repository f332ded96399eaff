/**
 * Recognises mail that must never be answered: auto-replies, bounces and other reports, mailing lists,
 * bulk mail, system senders. Answering those is how two automatic responders end up in a loop (RFC 3834);
 * our own replies carry `Auto-Submitted` so the other side's checks stop it too.
 */

/** Why a mail is not answered. */
export type AutomatedReason =
  | "auto_submitted"
  | "precedence"
  | "mailing_list"
  | "auto_reply_header"
  | "system_sender"
  | "delivery_report"
  | "null_sender"
  | "auto_reply_subject";

/** Header name (lowercase) → unfolded values, as `headerMap` builds it. */
export type HeaderMap = Map<string, string[]>;

/** Unfolded header values by lowercase name, from mailparser's raw header lines. */
export function headerMap(lines: readonly { key: string; line: string }[]): HeaderMap {
  const map: HeaderMap = new Map();
  for (const { key, line } of lines) {
    const colon = line.indexOf(":");
    const value = (colon < 0 ? "" : line.slice(colon + 1)).replace(/\r?\n[ \t]+/g, " ").trim();
    const name = key.toLowerCase();
    map.set(name, [...(map.get(name) ?? []), value]);
  }
  return map;
}

const SYSTEM_LOCAL_PARTS = /^(mailer-daemon|postmaster|no-?reply|do-?not-?reply|bounces?)([+-].*)?$/i;
const AUTO_SUBJECT =
  /^\s*(auto(matic|matische)?[ -]?(reply|response|antwort)|autoreply|out of (the )?office|abwesenheitsnotiz|undeliverable|undelivered mail|delivery status notification|mail delivery (failed|failure|system)|returned mail)\b/i;

/**
 * The reason `headers`/`from` mark an automated mail, or undefined for a person's mail.
 * @param from sender address, lowercased
 */
export function automatedReason(
  headers: HeaderMap,
  from: string,
  subject: string,
): AutomatedReason | undefined {
  const first = (name: string) => headers.get(name)?.[0]?.toLowerCase();
  const autoSubmitted = first("auto-submitted");
  if (autoSubmitted && autoSubmitted.split(";")[0]!.trim() !== "no") return "auto_submitted";
  const precedence = first("precedence") ?? first("x-precedence");
  if (precedence && /^(bulk|junk|list|auto_reply)\b/.test(precedence)) return "precedence";
  if (headers.has("list-id") || headers.has("list-unsubscribe") || headers.has("list-post")) {
    return "mailing_list";
  }
  if (headers.has("x-autoreply") || headers.has("x-autorespond") || headers.has("x-auto-response")) {
    return "auto_reply_header";
  }
  if (SYSTEM_LOCAL_PARTS.test(from.split("@")[0] ?? "")) return "system_sender";
  const contentType = first("content-type") ?? "";
  if (/^multipart\/report\b/.test(contentType)) return "delivery_report";
  const returnPath = first("return-path");
  if (returnPath !== undefined && /^<\s*>$/.test(returnPath)) return "null_sender";
  if (AUTO_SUBJECT.test(subject)) return "auto_reply_subject";
  return undefined;
}
