/**
 * Discord's side of streamed replies: preview messages posted and edited over REST, at most one edit
 * per `intervalMs` per reply (Discord allows about five edits per five seconds in a channel; discord.js
 * waits out a short 429 itself and the preview skips what it missed).
 */
import type { Logger } from "../../core/logger.js";
import type { KeyValueStore } from "../../core/types.js";
import { ReplyStreams } from "../shared/reply-stream.js";
import { formatChunks } from "./format.js";
import type { DiscordOutbound } from "./send.js";

/** The previews of one Discord adapter. */
export function discordStreams(
  outbound: DiscordOutbound,
  kv: KeyValueStore,
  logger: Logger,
  intervalMs: number,
): ReplyStreams<string> {
  return new ReplyStreams<string>({
    kv,
    logger,
    // Turn events and replies both name the inbound message by its snowflake.
    nativeId: (id) => id,
    platform: {
      chunks: (markdown) => formatChunks(markdown),
      post: (chat, chunk, replyToId) => outbound.postPreview(chat, chunk, replyToId),
      edit: (chat, messageId, chunk) => outbound.editPreview(chat, messageId, chunk),
      remove: (chat, messageId) => outbound.deleteMessage(chat, messageId),
      intervalMs: () => intervalMs,
    },
  });
}
