/**
 * A Baileys `WAMessage` → Herald's `InboundMessage`, or the reason it is skipped. Chats: `chatId` is the
 * remote JID (groups end in `@g.us`; a DM is keyed by the contact's phone-number JID when known, so the
 * same person keeps one session whether WhatsApp addresses them by phone number or by LID). `sender.id`
 * is the sender's phone number (the digits of the JID's user part), so allowlists of numbers match.
 */
import {
  getContentType,
  isJidBroadcast,
  isJidGroup,
  isJidNewsletter,
  isJidStatusBroadcast,
  isLidUser,
  isPnUser,
  jidDecode,
  jidNormalizedUser,
  normalizeMessageContent,
  type proto,
  toNumber,
} from "@whiskeysockets/baileys";
import type { InboundAttachment, InboundMessage } from "../../core/types.js";
import type { WAMessage, WAMessageKey } from "./types.js";

/** Who "me" is: the linked account's phone-number JID and LID, without device suffix. */
export interface Me {
  pn?: string | undefined;
  lid?: string | undefined;
}

export interface ParseContext {
  me: Me;
  /** Answer in the owner's "message yourself" chat. */
  selfChat: boolean;
  /** Ids of messages this adapter sent (never answered, even in the self chat). */
  sentIds: { has(id: string): boolean };
  /** Phone-number JID of a LID, when the socket knows it. */
  pnForLid?: ((lid: string) => Promise<string | null | undefined>) | undefined;
}

/** An inbound file still on WhatsApp's servers (`media.ts` downloads it). */
export interface MediaRef {
  kind: InboundAttachment["kind"];
  mimeType?: string | undefined;
  fileName?: string | undefined;
  sizeBytes?: number | undefined;
}

export type SkipReason =
  | "malformed"
  | "status"
  | "broadcast"
  | "newsletter"
  | "own-message"
  | "no-content"
  | "unsupported";

export type ParseResult =
  | { kind: "message"; inbound: InboundMessage; key: WAMessageKey; media?: MediaRef | undefined }
  | { kind: "skip"; reason: SkipReason; contentType?: string | undefined };

/** Content types that carry nothing for the agent (receipts of reactions, edits, key distribution…). */
const SILENT_TYPES = new Set([
  "protocolMessage",
  "reactionMessage",
  "pollUpdateMessage",
  "encReactionMessage",
  "keepInChatMessage",
  "pinInChatMessage",
  "messageContextInfo",
]);

/** Characters of the original message kept in `meta.quote` (to show the quote after a restart). */
const QUOTE_PREVIEW_CHARS = 300;

/** `15551234567@s.whatsapp.net` → `15551234567`; `123:4@lid` → `123`. */
export const userOf = (jid: string | null | undefined): string => jidDecode(jid ?? "")?.user ?? "";

const same = (a: string | null | undefined, b: string | undefined) =>
  Boolean(a && b && jidNormalizedUser(a) === b);

const isMe = (jid: string | null | undefined, me: Me) => same(jid, me.pn) || same(jid, me.lid);

/** The phone-number JID among a JID and its alternate, resolving a LID through the socket if needed. */
async function phoneJid(
  jid: string | null | undefined,
  alt: string | null | undefined,
  ctx: ParseContext,
): Promise<string | undefined> {
  if (isPnUser(jid ?? undefined)) return jidNormalizedUser(jid!);
  if (isPnUser(alt ?? undefined)) return jidNormalizedUser(alt!);
  if (jid && isLidUser(jid) && ctx.pnForLid) {
    const pn = await ctx.pnForLid(jidNormalizedUser(jid)).catch(() => undefined);
    if (pn && isPnUser(pn)) return jidNormalizedUser(pn);
  }
  return undefined;
}

interface Content {
  type: string | undefined;
  text: string;
  context: proto.IContextInfo | undefined;
  media: MediaRef | undefined;
}

function mediaOf(
  kind: MediaRef["kind"],
  m: { mimetype?: string | null; fileLength?: unknown },
  fileName?: string | null,
): MediaRef {
  const size = m.fileLength == null ? undefined : toNumber(m.fileLength as number);
  return {
    kind,
    mimeType: m.mimetype ?? undefined,
    fileName: fileName ?? undefined,
    sizeBytes: Number.isFinite(size) ? size : undefined,
  };
}

/** The text, context and media of a message's (unwrapped) content. */
export function contentOf(message: proto.IMessage | null | undefined): Content {
  const content = normalizeMessageContent(message);
  const type = getContentType(content ?? undefined);
  const none: Content = { type, text: "", context: undefined, media: undefined };
  if (!content || !type) return none;
  switch (type) {
    case "conversation":
      return { ...none, text: content.conversation ?? "" };
    case "extendedTextMessage": {
      const m = content.extendedTextMessage!;
      return { ...none, text: m.text ?? "", context: m.contextInfo ?? undefined };
    }
    case "imageMessage": {
      const m = content.imageMessage!;
      return { type, text: m.caption ?? "", context: m.contextInfo ?? undefined, media: mediaOf("image", m) };
    }
    case "videoMessage": {
      const m = content.videoMessage!;
      return { type, text: m.caption ?? "", context: m.contextInfo ?? undefined, media: mediaOf("video", m) };
    }
    case "audioMessage": {
      const m = content.audioMessage!;
      return { ...none, context: m.contextInfo ?? undefined, media: mediaOf(m.ptt ? "voice" : "audio", m) };
    }
    case "documentMessage": {
      const m = content.documentMessage!;
      const media = mediaOf("document", m, m.fileName ?? m.title);
      return { type, text: m.caption ?? "", context: m.contextInfo ?? undefined, media };
    }
    case "stickerMessage": {
      const m = content.stickerMessage!;
      return { ...none, context: m.contextInfo ?? undefined, media: mediaOf("image", m) };
    }
    case "locationMessage": {
      const m = content.locationMessage!;
      const place = [m.name, m.address].filter(Boolean).join(", ");
      const text = `📍 Location: ${m.degreesLatitude}, ${m.degreesLongitude}${place ? ` (${place})` : ""}`;
      return { ...none, text, context: m.contextInfo ?? undefined };
    }
    case "contactMessage": {
      const m = content.contactMessage!;
      return { ...none, text: `👤 Contact: ${m.displayName ?? ""}\n${m.vcard ?? ""}`.trim() };
    }
    default:
      return none;
  }
}

/** Removes the bot's own `@<number>` mentions and the whitespace they leave. */
function stripMentions(text: string, me: Me): string {
  const users = [userOf(me.pn), userOf(me.lid)].filter(Boolean);
  if (!users.length) return text;
  const re = new RegExp(`@(?:${users.join("|")})\\b`, "g");
  return text
    .replace(re, "")
    .replace(/[ \t]{2,}/g, " ")
    .trim();
}

/**
 * Parses one message of a `messages.upsert` of type `notify`. Never throws: a payload without a key is
 * `malformed`; status updates, broadcasts, channels and the account's own messages are skipped (own
 * messages count only in the "message yourself" chat when `selfChat` is on, and never the bot's replies).
 */
export async function parseMessage(msg: WAMessage, ctx: ParseContext): Promise<ParseResult> {
  const key = msg?.key;
  const remoteJid = key?.remoteJid;
  if (!key?.id || !remoteJid) return { kind: "skip", reason: "malformed" };
  if (isJidStatusBroadcast(remoteJid)) return { kind: "skip", reason: "status" };
  if (isJidBroadcast(remoteJid)) return { kind: "skip", reason: "broadcast" };
  if (isJidNewsletter(remoteJid)) return { kind: "skip", reason: "newsletter" };
  const group = isJidGroup(remoteJid) === true;
  const selfChat = !group && (isMe(remoteJid, ctx.me) || isMe(key.remoteJidAlt, ctx.me));
  if (key.fromMe && !(selfChat && ctx.selfChat && !ctx.sentIds.has(key.id))) {
    return { kind: "skip", reason: "own-message" };
  }

  const content = contentOf(msg.message);
  if (!content.type || SILENT_TYPES.has(content.type)) {
    return { kind: "skip", reason: "no-content", contentType: content.type };
  }
  if (!content.text.trim() && !content.media) {
    return { kind: "skip", reason: "unsupported", contentType: content.type };
  }

  let senderJid: string | undefined;
  let chatId: string;
  if (group) {
    chatId = remoteJid;
    const participant = key.participant ?? msg.participant;
    senderJid =
      (await phoneJid(participant, key.participantAlt, ctx)) ?? jidNormalizedUser(participant ?? "");
  } else if (selfChat) {
    senderJid = ctx.me.pn ?? ctx.me.lid;
    chatId = senderJid ?? jidNormalizedUser(remoteJid);
  } else {
    const pn = await phoneJid(remoteJid, key.remoteJidAlt, ctx);
    senderJid = pn ?? jidNormalizedUser(remoteJid);
    chatId = senderJid;
  }
  const senderId = userOf(senderJid);
  if (!senderId) return { kind: "skip", reason: "malformed" };

  const context = content.context;
  const mentioned =
    !group ||
    (context?.mentionedJid ?? []).some((jid) => isMe(jid, ctx.me)) ||
    Boolean(context?.stanzaId && isMe(context.participant, ctx.me));
  const text = group ? stripMentions(content.text, ctx.me) : content.text.trim();

  const meta: Record<string, string> = { jid: remoteJid };
  if (key.participant) meta["participant"] = key.participant;
  if (content.text) meta["quote"] = content.text.slice(0, QUOTE_PREVIEW_CHARS);
  const sentAtS = msg.messageTimestamp == null ? undefined : toNumber(msg.messageTimestamp as number);

  const inbound: InboundMessage = {
    platform: "whatsapp",
    messageId: key.id,
    chat: { platform: "whatsapp", chatId },
    chatType: group ? "group" : "dm",
    sender: { id: senderId, name: msg.pushName ?? undefined },
    text,
    mentioned,
    replyToId: key.id,
    sentAt: sentAtS && Number.isFinite(sentAtS) ? sentAtS * 1000 : undefined,
    meta,
  };
  return { kind: "message", inbound, key, media: content.media };
}
