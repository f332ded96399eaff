/**
 * Telegram's side of streamed replies: preview messages posted and edited as HTML chunks through the
 * sender, within the chat's send budget (a preview call goes only when a slot is free now, at most one
 * per second in a private chat and one per three seconds in a group, so the final text keeps the burst).
 */
import type { Logger } from "../../core/logger.js";
import type { KeyValueStore } from "../../core/types.js";
import { ReplyStreams } from "../shared/reply-stream.js";
import { formatChunks, type TelegramChunk } from "./format.js";
import { isGroupChatId } from "./parse.js";
import type { SendBudget } from "./rate-limit.js";
import type { TelegramSender } from "./sender.js";
import type { TelegramRateLimits } from "./types.js";

/** The previews of one Telegram adapter. */
export function telegramStreams(options: {
  sender: TelegramSender;
  budget: SendBudget;
  limits: TelegramRateLimits;
  kv: KeyValueStore;
  logger: Logger;
}): ReplyStreams<TelegramChunk> {
  const { sender, budget, limits } = options;
  const perChatMs = 1000 / limits.perChatPerSecond;
  return new ReplyStreams<TelegramChunk>({
    kv: options.kv,
    logger: options.logger,
    // The turn events name the inbound message as `chatId:messageId`; replies quote `messageId`.
    nativeId: (id) => id.slice(id.lastIndexOf(":") + 1),
    platform: {
      chunks: (markdown) => formatChunks(markdown),
      post: (chat, chunk, replyToId) => sender.postPreview(chat, chunk, replyToId),
      edit: (chat, messageId, chunk) => sender.editPreview(chat, messageId, chunk),
      remove: (chat, messageId) => sender.deleteMessage(chat, messageId),
      waitMs: (chat, call) => budget.waitMs(chat.chatId, call === "post" ? "message" : "other"),
      intervalMs: (chat) => (isGroupChatId(chat.chatId) ? Math.max(3000, perChatMs) : perChatMs),
    },
  });
}
