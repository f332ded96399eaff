/**
 * Telegram message → `InboundMessage`: who wrote it, where (chat, forum topic), whether the bot was
 * addressed (DM, `@bot`, a reply to the bot, `/cmd@bot`), and the text with the bot's own mention removed.
 * Payloads are validated with zod; a malformed one is reported, never thrown past the adapter.
 */
import { z } from "zod";
import type { InboundMessage } from "../../core/types.js";
import type { BotIdentity } from "./types.js";

const user = z.looseObject({
  id: z.number().int(),
  is_bot: z.boolean().optional(),
  first_name: z.string().optional(),
  last_name: z.string().optional(),
  username: z.string().optional(),
});

const entity = z.looseObject({
  type: z.string(),
  offset: z.number().int().min(0),
  length: z.number().int().min(0),
  user: user.optional(),
});

const fileRef = z.looseObject({
  file_id: z.string().min(1),
  file_unique_id: z.string().min(1),
  file_size: z.number().int().optional(),
  file_name: z.string().optional(),
  mime_type: z.string().optional(),
});

const chat = z.looseObject({
  id: z.number().int(),
  type: z.enum(["private", "group", "supergroup", "channel"]),
  title: z.string().optional(),
  is_forum: z.boolean().optional(),
});

const baseMessage = z.looseObject({
  message_id: z.number().int(),
  date: z.number().int(),
  chat,
  from: user.optional(),
  sender_chat: z.looseObject({ id: z.number().int(), title: z.string().optional() }).optional(),
  message_thread_id: z.number().int().optional(),
  is_topic_message: z.boolean().optional(),
  text: z.string().optional(),
  caption: z.string().optional(),
  entities: z.array(entity).optional(),
  caption_entities: z.array(entity).optional(),
  photo: z.array(fileRef.extend({ width: z.number(), height: z.number() })).optional(),
  document: fileRef.optional(),
  voice: fileRef.optional(),
  audio: fileRef.optional(),
  video: fileRef.optional(),
});

/** The parts of a Telegram `Message` the adapter reads. */
export const telegramMessage = baseMessage.extend({
  reply_to_message: z.looseObject({ message_id: z.number().int(), from: user.optional() }).optional(),
});

export type TelegramMessage = z.infer<typeof telegramMessage>;
export type TelegramFileRef = z.infer<typeof fileRef>;

/** The message's text (or caption) with the bot's mentions cut out, and whether the bot was addressed. */
function addressing(message: TelegramMessage, bot: BotIdentity): { text: string; mentioned: boolean } {
  const raw = message.text ?? message.caption ?? "";
  const entities = message.entities ?? message.caption_entities ?? [];
  const handle = `@${bot.username}`.toLowerCase();
  const cuts: { start: number; end: number }[] = [];
  let mentioned = message.chat.type === "private";
  for (const e of entities) {
    const part = raw.slice(e.offset, e.offset + e.length);
    if (e.type === "mention" && part.toLowerCase() === handle) {
      mentioned = true;
      cuts.push({ start: e.offset, end: e.offset + e.length });
    } else if (e.type === "text_mention" && e.user?.id === bot.id) {
      mentioned = true;
    } else if (e.type === "bot_command" && part.toLowerCase().endsWith(handle)) {
      mentioned = true;
      cuts.push({ start: e.offset + e.length - handle.length, end: e.offset + e.length });
    }
  }
  const reply = message.reply_to_message;
  // In a forum topic every message "replies" to the topic's first message; that is not addressing the bot.
  const topicRoot = message.is_topic_message && reply?.message_id === message.message_thread_id;
  if (reply?.from?.id === bot.id && !topicRoot) mentioned = true;

  let text = raw;
  for (const cut of cuts.sort((a, b) => b.start - a.start)) {
    const before = text.slice(0, cut.start);
    const after = text.slice(cut.end);
    // "@bot, hi" → "hi"; "ask @bot now" → "ask now".
    text = /\s$/.test(before) || before === "" ? before + after.replace(/^[\s,:;]+/, "") : before + after;
  }
  return { text: text.trim(), mentioned };
}

/** Display name of a user. */
function nameOf(message: TelegramMessage): string | undefined {
  if (message.sender_chat) return message.sender_chat.title;
  const from = message.from;
  if (!from) return undefined;
  const full = [from.first_name, from.last_name].filter(Boolean).join(" ");
  return full || from.username;
}

/** Whether a message carries something the agent can use (text, caption, or a supported file). */
export function hasContent(message: TelegramMessage): boolean {
  return Boolean(
    message.text ??
      message.caption ??
      message.photo ??
      message.document ??
      message.voice ??
      message.audio ??
      message.video,
  );
}

/**
 * Builds the gateway's message (without attachments). Returns undefined for what the gateway never
 * handles: channel posts, service messages, messages without a sender.
 */
export function toInbound(message: TelegramMessage, bot: BotIdentity): InboundMessage | undefined {
  if (message.chat.type === "channel" || !hasContent(message)) return undefined;
  const senderId = message.sender_chat?.id ?? message.from?.id;
  if (senderId === undefined) return undefined;
  const { text, mentioned } = addressing(message, bot);
  const threadId =
    message.is_topic_message && message.message_thread_id !== undefined
      ? String(message.message_thread_id)
      : undefined;
  const chatId = String(message.chat.id);
  return {
    platform: "telegram",
    // message_id is unique within a chat only, and the same on every redelivery of the update.
    messageId: `${chatId}:${message.message_id}`,
    chat: threadId ? { platform: "telegram", chatId, threadId } : { platform: "telegram", chatId },
    chatType: message.chat.type === "private" ? "dm" : "group",
    // An anonymous admin writes as the group (`sender_chat`) through a bot account: not a bot.
    sender: {
      id: String(senderId),
      name: nameOf(message),
      isBot: !message.sender_chat && (message.from?.is_bot ?? false),
    },
    text,
    mentioned,
    replyToId: String(message.message_id),
    sentAt: message.date * 1000,
  };
}

/** True for chat ids of groups, supergroups and channels (Telegram gives them negative ids). */
export function isGroupChatId(chatId: string): boolean {
  return chatId.startsWith("-");
}
