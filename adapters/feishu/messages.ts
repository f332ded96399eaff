/**
 * Feishu messages: sent (`im.message.create` to the chat, or `im.message.reply` to quote the message
 * answered, in its topic when there is one), patched (cards), deleted. Each send carries a `uuid`
 * derived from the outbox key and chunk, so Feishu drops a retried duplicate within the hour. Also the
 * streamed-reply previews: cards posted, then patched at most once a second.
 */
import { createHash } from "node:crypto";
import { PlatformError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { ChatRef, KeyValueStore } from "../../core/types.js";
import { ReplyStreams } from "../shared/reply-stream.js";
import type { FeishuApi } from "./api.js";
import { card, feishuChunks } from "./format.js";

/** One message to post. */
export interface PostOptions {
  msgType: string;
  content: string;
  /** Feishu's idempotency key (at most 50 characters). */
  uuid?: string | undefined;
  /** Quote this message (its id); the reply goes in the message's topic in a thread chat. */
  replyTo?: string | undefined;
}

/** A uuid of at most 50 characters for `key`. */
export const sendUuid = (key: string) =>
  key.length <= 50 ? key : createHash("sha256").update(key).digest("hex").slice(0, 40);

/** Posts a message into `chat`; resolves to its id. */
export async function postMessage(api: FeishuApi, chat: ChatRef, options: PostOptions): Promise<string> {
  const data = {
    msg_type: options.msgType,
    content: options.content,
    ...(options.uuid ? { uuid: options.uuid } : {}),
  };
  const out = options.replyTo
    ? await api.call("im.message.reply", (c) =>
        c.im.message.reply({
          path: { message_id: options.replyTo! },
          data: { ...data, reply_in_thread: Boolean(chat.threadId) },
        }),
      )
    : await api.call("im.message.create", (c) =>
        c.im.message.create({
          params: { receive_id_type: "chat_id" },
          data: { receive_id: chat.chatId, ...data },
        }),
      );
  const id = out.data?.message_id;
  if (!id)
    throw new PlatformError("feishu", "Feishu confirmed a message without its message_id", {
      retryable: true,
    });
  return id;
}

/** Replaces a card's content. */
export async function patchCard(api: FeishuApi, messageId: string, content: string): Promise<void> {
  await api.call("im.message.patch", (c) =>
    c.im.message.patch({ path: { message_id: messageId }, data: { content } }),
  );
}

/** Deletes (recalls) a message; one already gone is not an error. */
export async function deleteMessage(api: FeishuApi, messageId: string): Promise<void> {
  try {
    await api.call("im.message.delete", (c) => c.im.message.delete({ path: { message_id: messageId } }));
  } catch (err) {
    // 230011: the message was recalled already; 231003: it does not exist.
    if (err instanceof PlatformError && /code (230011|231003)/.test(err.message)) return;
    throw err;
  }
}

/** The streamed-reply previews of one adapter: cards posted, then patched. */
export function feishuStreams(
  api: FeishuApi,
  kv: KeyValueStore,
  logger: Logger,
  quote: (chat: ChatRef) => boolean,
) {
  return new ReplyStreams<string>({
    kv,
    logger,
    nativeId: (id) => id,
    platform: {
      chunks: (markdown) => feishuChunks(markdown),
      post: (chat, chunk, replyToId) =>
        postMessage(api, chat, {
          msgType: "interactive",
          content: card(chunk),
          replyTo: quote(chat) ? replyToId : undefined,
        }),
      edit: (_chat, id, chunk) => patchCard(api, id, card(chunk)),
      remove: (_chat, id) => deleteMessage(api, id),
      intervalMs: () => 1000,
    },
  });
}
