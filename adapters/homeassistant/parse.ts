/**
 * A Home Assistant conversation request → an `InboundMessage`. The conversation is the chat (each is
 * its own session; without an id a new conversation starts, whose id the answer carries back); the
 * sender is the Home Assistant user who spoke, or `homeassistant` when the request names none (a voice
 * satellite, an automation). Every request is addressed to Herald (a DM).
 */
import type { InboundMessage } from "../../core/types.js";
import type { ConversationRequest } from "./types.js";

/** The sender of requests that name no Home Assistant user. */
export const DEFAULT_SENDER = "homeassistant";

/** Conversation ids Herald keeps as chat ids (Home Assistant's are ULIDs). */
const CONVERSATION_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * The inbound message of a request, or why it is refused. `messageId` is fresh per request (Home
 * Assistant does not redeliver); `newConversation` names the conversation a request without one starts.
 */
export function toInbound(
  request: ConversationRequest,
  messageId: string,
  newConversation: string,
): { inbound: InboundMessage; conversationId: string } | { error: string } {
  const conversationId = request.conversation_id ?? newConversation;
  if (!CONVERSATION_ID.test(conversationId))
    return { error: "'conversation_id' may hold 1–128 letters, digits, '.', '_' or '-'" };
  const sender = request.user_id?.trim() || DEFAULT_SENDER;
  const meta: Record<string, string> = {};
  if (request.language) meta["language"] = request.language;
  if (request.device_id) meta["device_id"] = request.device_id;
  const inbound: InboundMessage = {
    platform: "homeassistant",
    messageId,
    chat: { platform: "homeassistant", chatId: conversationId },
    chatType: "dm",
    sender: { id: sender },
    text: (request.text ?? request.query ?? "").trim(),
    mentioned: true,
    sentAt: Date.now(),
    ...(Object.keys(meta).length ? { meta } : {}),
  };
  return { inbound, conversationId };
}
