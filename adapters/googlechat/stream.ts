/**
 * Google Chat's side of streamed replies (`stream: edit`): a preview message created in the reply's
 * thread and patched in place at most every 1.5 s per reply (Chat allows about one write a second
 * per space).
 */
import type { Logger } from "../../core/logger.js";
import type { ChatRef, KeyValueStore } from "../../core/types.js";
import { ReplyStreams } from "../shared/reply-stream.js";
import type { ChatApi } from "./api.js";
import { googlechatChunks } from "./format.js";
import { threadName } from "./parse.js";

const INTERVAL_MS = 1500;

/** The thread part of a message body for `chat`. */
export const threadOf = (chat: ChatRef) =>
  chat.threadId ? { thread: { name: threadName(chat.chatId, chat.threadId) } } : {};

/** The previews of one Google Chat adapter. */
export function googlechatStreams(
  api: () => ChatApi | undefined,
  kv: KeyValueStore,
  logger: Logger,
): ReplyStreams<string> {
  const live = () => {
    const a = api();
    if (!a) throw new Error("the Google Chat adapter is stopped");
    return a;
  };
  return new ReplyStreams<string>({
    kv,
    logger,
    nativeId: (id) => id,
    platform: {
      chunks: (markdown) => googlechatChunks(markdown),
      post: (chat, chunk) => live().create(chat.chatId, { text: chunk, ...threadOf(chat) }),
      edit: (_chat, id, chunk) => live().update(id, { text: chunk }),
      remove: (_chat, id) => live().delete(id),
      intervalMs: () => INTERVAL_MS,
    },
  });
}
