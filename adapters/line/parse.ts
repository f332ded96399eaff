/**
 * LINE webhook events → `InboundMessage`s. Pure functions. A user's 1:1 chat is a DM (chat id: the
 * user id `U…`); groups (`C…`) and multi-person chats (`R…`) are groups, where the bot is addressed by
 * a mention LINE marks `isSelf`. A postback (a tapped quick-reply button) is a message of the tapping
 * user whose text is the button's data. The reply token and the event's time travel in `meta`, so the
 * first reply can use the (free, one-use) reply API.
 */
import type { InboundMessage } from "../../core/types.js";
import { eventSchema, type LineEvent, type LineMessage, type LineSource } from "./types.js";

/** An event that does not have the shape LINE documents. */
export class MalformedEventError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MalformedEventError";
  }
}

/** Message types whose content is a file to download. */
export const CONTENT_TYPES = new Set(["image", "video", "audio", "file"]);

/** The chat an event happened in: the group, the room, or the user. */
export function chatIdOf(source: LineSource): string {
  if (source.type === "group") return source.groupId;
  if (source.type === "room") return source.roomId;
  return source.userId;
}

/** Validates one raw event. @throws MalformedEventError naming what is wrong. */
export function readEvent(raw: unknown): LineEvent {
  const parsed = eventSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new MalformedEventError(`${issue?.path.join(".") || "event"}: ${issue?.message ?? "invalid"}`);
  }
  return parsed.data;
}

/** The text without the bot's own mentions, and whether it had one. */
function withoutSelfMentions(message: LineMessage): { text: string; mentioned: boolean } {
  let text = message.text ?? "";
  const self = (message.mention?.mentionees ?? []).filter((m) => m.isSelf).sort((a, b) => b.index - a.index);
  for (const m of self) text = text.slice(0, m.index) + text.slice(m.index + m.length);
  return { text: text.replace(/\s{2,}/g, " ").trim(), mentioned: self.length > 0 };
}

/** What a non-text message says when it has no text of its own. */
function placeholder(message: LineMessage): string {
  if (message.type === "sticker") return "[sticker]";
  if (message.type === "location")
    return `[location] ${String((message as { address?: unknown }).address ?? "")}`.trim();
  return "";
}

/**
 * A message or postback event as an inbound message; undefined for events Herald does not answer
 * (follow, join, unsend, standby-mode events, events without a user).
 */
export function parseEvent(event: LineEvent): InboundMessage | undefined {
  if (event.mode === "standby" || !event.source?.userId) return undefined;
  const source = event.source;
  const chatType = source.type === "user" ? "dm" : "group";
  const base = {
    platform: "line",
    chat: { platform: "line", chatId: chatIdOf(source) },
    chatType,
    sender: { id: source.userId! },
    sentAt: event.timestamp,
    meta: replyMeta(event),
  } as const;
  if (event.type === "postback" && event.postback) {
    return {
      ...base,
      messageId: event.webhookEventId,
      text: event.postback.data,
      mentioned: true,
      viaButton: true,
    };
  }
  if (event.type !== "message" || !event.message) return undefined;
  const message = event.message;
  const { text, mentioned } =
    message.type === "text" ? withoutSelfMentions(message) : { text: placeholder(message), mentioned: false };
  return {
    ...base,
    messageId: message.id,
    text,
    mentioned: chatType === "dm" || mentioned,
    replyToId: message.id,
  };
}

/** The reply token while it may still work: a redelivered event's token has been spent or expired. */
function replyMeta(event: LineEvent): Record<string, string> | undefined {
  if (!event.replyToken || event.deliveryContext?.isRedelivery) return undefined;
  return { replyToken: event.replyToken, eventAt: String(event.timestamp) };
}
