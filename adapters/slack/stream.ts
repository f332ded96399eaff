/**
 * Slack's side of streamed replies: preview messages posted with chat.postMessage (in the reply's
 * thread) and edited with chat.update, at most one call a second per reply, none while Slack's last
 * 429 for that method and channel has not expired.
 */
import { describeError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { ChatRef, KeyValueStore } from "../../core/types.js";
import { ReplyStreams } from "../shared/reply-stream.js";
import type { SlackApi } from "./api.js";
import { renderChunks } from "./format.js";

/** Minimum time between two preview calls of one reply (chat.update is Tier 3, ~50 a minute). */
const INTERVAL_MS = 1000;

/** Posts one chunk as a new message of the chat (its thread, when it has one); resolves to its ts. */
export async function postChunk(
  api: SlackApi,
  chat: ChatRef,
  text: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const thread = chat.threadId ? { thread_ts: chat.threadId } : {};
  const args = { channel: chat.chatId, text, ...thread, ...extra };
  return (await api.call<{ ts?: string }>("chat.postMessage", args, chat.chatId)).ts ?? "";
}

/** Replaces a message's text; false when the message is gone (deleted by someone). */
export async function updateChunk(
  api: SlackApi,
  chat: ChatRef,
  ts: string,
  text: string,
  extra: Record<string, unknown> = {},
): Promise<boolean> {
  try {
    await api.call("chat.update", { channel: chat.chatId, ts, text, ...extra }, chat.chatId);
    return true;
  } catch (err) {
    if (/message_not_found|cant_update_message/.test(describeError(err))) return false;
    throw err;
  }
}

/** The previews of one Slack adapter. */
export function slackStreams(api: SlackApi, kv: KeyValueStore, logger: Logger): ReplyStreams<string> {
  return new ReplyStreams<string>({
    kv,
    logger,
    // The turn events name the inbound message as `channel:ts`; replies carry its `ts`.
    nativeId: (id) => id.slice(id.lastIndexOf(":") + 1),
    platform: {
      chunks: (markdown) => renderChunks(markdown),
      post: (chat, chunk) => postChunk(api, chat, chunk),
      edit: async (chat, ts, chunk) => {
        await updateChunk(api, chat, ts, chunk);
      },
      remove: async (chat, ts) => {
        await api.call("chat.delete", { channel: chat.chatId, ts }, chat.chatId).catch((err: unknown) => {
          if (!/message_not_found/.test(describeError(err))) throw err;
        });
      },
      waitMs: (chat, call) =>
        api.blockedMs(call === "post" ? "chat.postMessage" : "chat.update", chat.chatId),
      intervalMs: () => INTERVAL_MS,
    },
  });
}
