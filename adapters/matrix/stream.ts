/**
 * Matrix's side of streamed replies: a preview event sent as the reply, then replaced (`m.replace`) at
 * most every `intervalMs` (homeservers rate-limit messages per user, edits included: Synapse allows a
 * burst of 10, then one every 5 s by default; a 429 makes the preview wait what the server asked).
 */
import type { Logger } from "../../core/logger.js";
import type { ChatRef, KeyValueStore } from "../../core/types.js";
import { ReplyStreams } from "../shared/reply-stream.js";
import { txnIdFor } from "./api.js";
import { chunkMarkdown, editContent, relationFor, textContent } from "./format.js";

/** What the previews need of the adapter's session. */
export interface MatrixPreviewSink {
  /** Sends one room message event; resolves to its event id. */
  send(chat: ChatRef, content: Record<string, unknown>, txnId: string): Promise<string>;
  redact(chat: ChatRef, eventId: string): Promise<void>;
}

/** The content that replaces event `eventId` with `markdown` (a reply, so clients notify as usual). */
export function replacement(eventId: string, markdown: string): Record<string, unknown> {
  return editContent(eventId, markdown, "reply");
}

/** The previews of one Matrix adapter. */
export function matrixStreams(options: {
  sink: MatrixPreviewSink;
  kv: KeyValueStore;
  logger: Logger;
  maxMessageChars?: number | undefined;
  intervalMs: number;
}): ReplyStreams<string> {
  const { sink } = options;
  let posts = 0;
  return new ReplyStreams<string>({
    kv: options.kv,
    logger: options.logger,
    // Turn events and replies both name the inbound message by its event id.
    nativeId: (id) => id,
    platform: {
      chunks: (markdown) => chunkMarkdown(markdown, options.maxMessageChars),
      post: (chat, chunk, replyToId) => {
        const content: Record<string, unknown> = { ...textContent(chunk, "reply"), "m.mentions": {} };
        const relation = relationFor(chat, replyToId, undefined);
        if (relation) content["m.relates_to"] = relation;
        return sink.send(chat, content, txnIdFor(`stream.${replyToId}.${Date.now()}.${posts++}`, 0));
      },
      edit: async (chat, eventId, chunk) => {
        await sink.send(chat, replacement(eventId, chunk), txnIdFor(`stream.${eventId}.${chunk}`, 0));
      },
      remove: (chat, eventId) => sink.redact(chat, eventId),
      intervalMs: () => options.intervalMs,
    },
  });
}
