/**
 * A fetched mail → an `InboundMessage`, or the reason it is not passed on. Decides, in order: a sender
 * at all, not ourselves, not automated (auto-reply, bounce, list, bulk), an allowed sender, a sender the
 * receiving server vouches for (see sender-auth.ts); then the thread, the new text (quotes and signature
 * stripped, HTML-only mail converted) and the attachments (saved under the cache folder, larger ones
 * left out with a note the agent can see).
 */
import { createHash } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type Attachment, type EmailAddress, simpleParser } from "mailparser";
import type { InboundAttachment, InboundMessage } from "../../core/types.js";
import { attachmentKindOf, megabytes } from "../shared/media.js";
import { type AutomatedReason, automatedReason, headerMap } from "./automated.js";
import { htmlToText, stripQuoted } from "./quote.js";
import { checkSender, type SenderCheckPolicy } from "./sender-auth.js";
import { bareId, headerId, parseIds, type ThreadStore } from "./threads.js";
import type { FetchedMail, ThreadMeta } from "./types.js";

export interface ParseContext {
  /** The assistant's own address, lowercased. */
  ownAddress: string;
  /** Whether mail from this (lowercased) address goes to the gateway. */
  isAllowed(address: string): boolean;
  threads: ThreadStore;
  /** Folder for saved attachments (created when needed). */
  attachmentsDir: string;
  maxAttachmentBytes: number;
  /** How the sender is checked; undefined: not at all (the From: address is believed). */
  senderCheck?: SenderCheckPolicy | undefined;
}

/** Why a mail was not passed on. */
export type SkipReason = AutomatedReason | "no_sender" | "self" | "not_allowed" | "sender_unverified";

/** A message for the gateway (with who vouched for its sender, when checked), or why there is none. */
export type ParseResult =
  | { kind: "message"; message: InboundMessage; vouchedBy?: { method: string; authservId: string } }
  | { kind: "skip"; reason: SkipReason; from?: string | undefined; detail?: string | undefined };

/**
 * Parses one mail. Writes the thread mapping and any attachments as side effects.
 * @throws on a message mailparser cannot read at all (the caller logs and skips it).
 */
export async function parseMail(mail: FetchedMail, ctx: ParseContext): Promise<ParseResult> {
  const parsed = await simpleParser(mail.source, {
    skipHtmlToText: true,
    skipTextToHtml: true,
    skipImageLinks: true,
  });
  const sender = parsed.from?.value.find((a) => a.address);
  const from = sender?.address?.trim().toLowerCase();
  if (!from) return { kind: "skip", reason: "no_sender" };
  if (from === ctx.ownAddress) return { kind: "skip", reason: "self", from };
  const subject = parsed.subject ?? "";
  const automated = automatedReason(headerMap(parsed.headerLines), from, subject);
  if (automated) return { kind: "skip", reason: automated, from };
  if (!ctx.isAllowed(from)) return { kind: "skip", reason: "not_allowed", from };
  let vouchedBy: { method: string; authservId: string } | undefined;
  if (ctx.senderCheck) {
    const fromAddresses = addressesOf(parsed.from?.value ?? []);
    const verdict = checkSender({ headerLines: parsed.headerLines, fromAddresses }, ctx.senderCheck);
    if (!verdict.vouched) return { kind: "skip", reason: "sender_unverified", from, detail: verdict.detail };
    vouchedBy = { method: verdict.by, authservId: verdict.authservId };
  }

  const ownId = parsed.messageId ? bareId(parsed.messageId) : undefined;
  // No Message-ID: the mailbox position is stable across redeliveries (the ledger's dedupe key).
  const messageId = ownId ?? `${mail.uidValidity}:${mail.uid}`;
  const inReplyTo = parseIds(parsed.inReplyTo);
  const references = parseIds(parsed.references);
  const root = ctx.threads.resolve({ messageId, inReplyTo, references, subject, from });
  ctx.threads.remember(messageId, root, from, subject);
  const meta: ThreadMeta | undefined = ownId
    ? { messageId: headerId(ownId), references: references.map(headerId).join(" "), subject }
    : undefined;
  if (meta) ctx.threads.setLastMeta(root, meta);

  let body = "";
  if (parsed.text?.trim()) body = stripQuoted(parsed.text);
  else if (parsed.html) body = stripQuoted(htmlToText(parsed.html));
  const startsThread = root === messageId;
  const opening = inReplyTo.map((id) => ctx.threads.opening(id)).find(Boolean);
  if (opening && !body.startsWith("/")) body = `${quoteOpening(opening)}\n\n${body}`;
  // The subject often carries the question of a new mail; replies repeat it with "Re:".
  let text =
    startsThread && subject.trim() && !body.startsWith("/") ? `Subject: ${subject.trim()}\n\n${body}` : body;

  const saved = await saveAttachments(parsed.attachments, messageId, ctx);
  if (saved.notes.length > 0) text = [text, ...saved.notes].filter(Boolean).join("\n\n");

  const message: InboundMessage = {
    platform: "email",
    messageId,
    chat: { platform: "email", chatId: from, threadId: root },
    chatType: "dm",
    sender: { id: from, name: sender?.name || undefined },
    text: text.trim(),
    mentioned: true,
    replyToId: messageId,
    sentAt: parsed.date?.getTime(),
  };
  if (saved.files.length > 0) message.attachments = saved.files;
  if (meta) message.meta = { ...meta };
  return vouchedBy ? { kind: "message", message, vouchedBy } : { kind: "message", message };
}

/** Every address of an address list, the members of groups included, lowercased. */
function addressesOf(list: readonly EmailAddress[]): string[] {
  return list.flatMap((entry) =>
    entry.group ? addressesOf(entry.group) : entry.address ? [entry.address.trim().toLowerCase()] : [],
  );
}

/** A reply to a report we sent: the report, quoted, so the new session knows what is being answered. */
function quoteOpening(opening: { subject: string; text: string }): string {
  const quoted = opening.text
    .trim()
    .split("\n")
    .map((line) => (line ? `> ${line}` : ">"))
    .join("\n");
  return `(In reply to your message "${opening.subject}":)\n${quoted}`;
}

function safeFileName(name: string | undefined, index: number): string {
  const base = (name ?? "").split(/[\\/]/).pop() ?? "";
  const cleaned = base
    .replace(/[^\w.-]+/g, "_")
    .replace(/^\.+/, "")
    .slice(-100);
  return cleaned || `attachment-${index + 1}`;
}

/** Writes the attachments that fit the cap; the same mail always yields the same paths. */
async function saveAttachments(
  attachments: Attachment[],
  messageId: string,
  ctx: ParseContext,
): Promise<{ files: InboundAttachment[]; notes: string[] }> {
  const files: InboundAttachment[] = [];
  const notes: string[] = [];
  for (const [index, attachment] of attachments.entries()) {
    const fileName = safeFileName(attachment.filename, index);
    if (attachment.size > ctx.maxAttachmentBytes) {
      notes.push(
        `[Attachment "${fileName}" (${megabytes(attachment.size)}) was not included: larger than the ${megabytes(ctx.maxAttachmentBytes)} limit.]`,
      );
      continue;
    }
    const prefix = createHash("sha256").update(`${messageId}\n${index}`).digest("hex").slice(0, 16);
    const path = join(ctx.attachmentsDir, `${prefix}-${fileName}`);
    await mkdir(ctx.attachmentsDir, { recursive: true });
    await writeFile(path, attachment.content);
    files.push({
      kind: attachmentKindOf(attachment.contentType),
      path,
      fileName: attachment.filename ?? fileName,
      mimeType: attachment.contentType,
      sizeBytes: attachment.size,
    });
  }
  return { files, notes };
}
