/**
 * A Matrix room event (its wire JSON) → an `InboundMessage`, or the reason it is not one. Pure: the
 * adapter supplies the room facts (DM or not, display names, who sent the event a reply points at).
 */
import { z } from "zod";
import type { InboundAttachment, InboundMessage } from "../../core/types.js";
import type { RoomFacts } from "./types.js";

/** The parts of an event the adapter reads; everything else is ignored. */
export interface RawEvent {
  type?: unknown;
  event_id?: unknown;
  sender?: unknown;
  origin_server_ts?: unknown;
  content?: unknown;
}

const relatesTo = z
  .object({
    rel_type: z.string().optional(),
    event_id: z.string().optional(),
    is_falling_back: z.boolean().optional(),
    "m.in_reply_to": z.object({ event_id: z.string() }).optional(),
  })
  .optional();

const contentSchema = z.object({
  msgtype: z.string(),
  body: z.string(),
  format: z.string().optional(),
  formatted_body: z.string().optional(),
  url: z.string().optional(),
  filename: z.string().optional(),
  info: z.object({ mimetype: z.string().optional(), size: z.number().optional() }).optional(),
  "m.relates_to": relatesTo,
  "m.mentions": z.object({ user_ids: z.array(z.string()).optional() }).optional(),
});

const eventSchema = z.object({
  type: z.literal("m.room.message"),
  event_id: z.string().startsWith("$"),
  sender: z.string().startsWith("@"),
  origin_server_ts: z.number().optional(),
  content: contentSchema,
});

/** A file the adapter should download (`mxc://` URL) before passing the message on. */
export interface MediaRef {
  url: string;
  kind: InboundAttachment["kind"];
  fileName: string;
  mimeType?: string | undefined;
  sizeBytes?: number | undefined;
}

export type ParseResult =
  | { kind: "message"; message: InboundMessage; media?: MediaRef | undefined }
  | { kind: "skip"; reason: "own" | "not_message" | "notice" | "edit" | "unsupported" | "malformed" };

const MEDIA: Record<string, InboundAttachment["kind"]> = {
  "m.image": "image",
  "m.audio": "audio",
  "m.video": "video",
  "m.file": "document",
};

/** The text a reply carries before the user's own words (`> <@alice:hs> quoted…` lines). */
export function stripReplyFallback(body: string): string {
  const lines = body.split("\n");
  let i = 0;
  while (i < lines.length && lines[i]!.startsWith(">")) i++;
  if (i === 0) return body;
  if (lines[i] === "") i++;
  return lines.slice(i).join("\n");
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Whether `body`/`html` name the bot, and the text with a leading mention of it removed. */
export function findMention(
  body: string,
  html: string | undefined,
  botUserId: string,
  names: (string | undefined)[],
): { mentioned: boolean; text: string } {
  const pill =
    html?.includes(`matrix.to/#/${botUserId}`) ||
    html?.includes(`matrix.to/#/${encodeURIComponent(botUserId)}`);
  const tokens = [
    botUserId,
    ...names.filter((n): n is string => !!n && n.trim().length > 1).map((n) => n.trim()),
  ];
  let mentioned = pill === true;
  let text = body;
  for (const token of tokens) {
    const leading = new RegExp(`^\\s*@?${escapeRe(token)}(?![\\w-])\\s*[:,]?\\s*`, "i");
    if (leading.test(text)) {
      mentioned = true;
      text = text.replace(leading, "");
      break;
    }
  }
  if (text.includes(botUserId)) {
    mentioned = true;
    text = text
      .split(botUserId)
      .join("")
      .replace(/\s{2,}/g, " ")
      .trim();
  }
  if (!mentioned) {
    mentioned = tokens
      .slice(1)
      .some((n) => new RegExp(`(^|[^\\w])@?${escapeRe(n)}(?![\\w-])`, "i").test(text));
  }
  return { mentioned, text: text.trim() };
}

/** Parses one timeline event. Never throws: a malformed event gives `{ kind: "skip", reason: "malformed" }`. */
export function parseEvent(
  raw: RawEvent,
  room: RoomFacts,
  bot: { userId: string; displayName?: string | undefined },
): ParseResult {
  if (raw.type !== "m.room.message") return { kind: "skip", reason: "not_message" };
  if (raw.sender === bot.userId) return { kind: "skip", reason: "own" };
  const parsed = eventSchema.safeParse(raw);
  if (!parsed.success) return { kind: "skip", reason: "malformed" };
  const event = parsed.data;
  const content = event.content;
  const relation = content["m.relates_to"];
  if (relation?.rel_type === "m.replace") return { kind: "skip", reason: "edit" };
  // m.notice is what bots send; answering it risks two bots talking forever.
  if (content.msgtype === "m.notice") return { kind: "skip", reason: "notice" };
  const mediaKind = MEDIA[content.msgtype];
  if (!mediaKind && content.msgtype !== "m.text" && content.msgtype !== "m.emote") {
    return { kind: "skip", reason: "unsupported" };
  }

  const threadId = relation?.rel_type === "m.thread" && relation.event_id ? relation.event_id : undefined;
  const replyTo = relation?.is_falling_back === true ? undefined : relation?.["m.in_reply_to"]?.event_id;
  const body = replyTo ? stripReplyFallback(content.body) : content.body;
  const names = [room.botRoomName, bot.displayName];
  // The quoted part of a reply (`<mx-reply>`) names the quoted sender: not a mention of the bot.
  const html = content.formatted_body?.replace(/<mx-reply>[\s\S]*?<\/mx-reply>/g, "");
  // With `filename` set, a media event's `body` is a caption (Matrix v1.10); without, it is the file name.
  const caption = content.filename && content.body !== content.filename ? body : "";
  const found = findMention(mediaKind ? caption : body, html, bot.userId, names);
  const mentioned =
    room.isDirect ||
    found.mentioned ||
    (content["m.mentions"]?.user_ids ?? []).includes(bot.userId) ||
    (replyTo !== undefined && room.repliedToSender === bot.userId);
  const text =
    content.msgtype === "m.emote" ? `* ${room.senderName ?? event.sender} ${found.text}` : found.text;

  const message: InboundMessage = {
    platform: "matrix",
    messageId: event.event_id,
    chat: threadId
      ? { platform: "matrix", chatId: room.roomId, threadId }
      : { platform: "matrix", chatId: room.roomId },
    chatType: room.isDirect ? "dm" : "group",
    sender: { id: event.sender, name: room.senderName },
    text,
    mentioned,
    replyToId: event.event_id,
    sentAt: event.origin_server_ts,
  };
  if (!mediaKind) return { kind: "message", message };
  if (!content.url?.startsWith("mxc://")) return { kind: "skip", reason: "malformed" };
  const fileName = content.filename ?? content.body;
  return {
    kind: "message",
    message,
    media: {
      url: content.url,
      kind: mediaKind,
      fileName,
      mimeType: content.info?.mimetype,
      sizeBytes: content.info?.size,
    },
  };
}
