/**
 * Teams' side of streamed replies (`stream: edit`): a preview message posted into the reply's
 * conversation and updated in place (`updateActivity`) at most every 1.5 s per reply, which keeps a
 * streamed reply well inside Teams' per-conversation rate limits.
 */
import type { Logger } from "../../core/logger.js";
import type { ChatRef, KeyValueStore } from "../../core/types.js";
import { ReplyStreams } from "../shared/reply-stream.js";
import type { TeamsConnector } from "./connector.js";
import { teamsChunks } from "./format.js";
import { conversationOf, nativeIdOf } from "./parse.js";
import type { OutActivity, TeamsChatRef } from "./types.js";

const INTERVAL_MS = 1500;

/** A Markdown text message. */
export const textActivity = (text: string): OutActivity => ({
  type: "message",
  text,
  textFormat: "markdown",
  attachments: [],
});

/** The previews of one Teams adapter; `refOf` finds a chat's connector. */
export function teamsStreams(
  connector: () => TeamsConnector | undefined,
  refOf: (chat: ChatRef) => TeamsChatRef,
  kv: KeyValueStore,
  logger: Logger,
): ReplyStreams<string> {
  const live = () => {
    const c = connector();
    if (!c) throw new Error("the Teams adapter is stopped");
    return c;
  };
  return new ReplyStreams<string>({
    kv,
    logger,
    nativeId: nativeIdOf,
    platform: {
      chunks: (markdown) => teamsChunks(markdown),
      post: (chat, chunk) => live().send(refOf(chat), conversationOf(chat), textActivity(chunk)),
      edit: (chat, id, chunk) => live().update(refOf(chat), conversationOf(chat), id, textActivity(chunk)),
      remove: (chat, id) => live().delete(refOf(chat), conversationOf(chat), id),
      intervalMs: () => INTERVAL_MS,
    },
  });
}
