/**
 * BlueBubbles messages → `InboundMessage`s. Pure functions. The chat is the message's chat guid:
 * `iMessage;-;+1555…` (or `SMS;-;…`) is a DM, `iMessage;+;chat…` a group chat, where Herald is
 * addressed by one of its names as a word (removed from the text). Herald's own messages (`isFromMe`),
 * tapbacks and other reactions (`associatedMessageGuid`) and group events are not messages to answer.
 */
import type { InboundMessage } from "../../core/types.js";
import { type BlueBubblesMessage, messageSchema } from "./types.js";

/** A message that does not have the shape BlueBubbles sends. */
export class MalformedEventError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MalformedEventError";
  }
}

/** Whether a chat guid is a group chat (`;+;`) rather than a DM (`;-;`). */
export const isGroupGuid = (guid: string) => guid.includes(";+;");

/** Validates one message. @throws MalformedEventError naming what is wrong. */
export function readMessage(raw: unknown): BlueBubblesMessage {
  const parsed = messageSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new MalformedEventError(`${issue?.path.join(".") || "data"}: ${issue?.message ?? "invalid"}`);
  }
  return parsed.data;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The text without Herald's names, and whether one was there. */
function withoutNames(text: string, names: string[]): { text: string; mentioned: boolean } {
  let mentioned = false;
  let out = text;
  for (const name of names) {
    const pattern = new RegExp(`(^|\\s)@?${escapeRegExp(name)}\\b[,:]?`, "gi");
    out = out.replace(pattern, (_, space: string) => {
      mentioned = true;
      return space;
    });
  }
  return { text: out.replace(/\s{2,}/g, " ").trim(), mentioned };
}

/** A message as an inbound message; undefined for what Herald does not answer. */
export function parseMessage(message: BlueBubblesMessage, names: string[]): InboundMessage | undefined {
  if (message.isFromMe || message.associatedMessageGuid || message.associatedMessageType) return undefined;
  if (message.isSystemMessage || (message.itemType ?? 0) !== 0) return undefined;
  const chat = message.chats[0];
  const sender = message.handle?.address;
  if (!chat || !sender) return undefined;
  const group = isGroupGuid(chat.guid);
  const raw = message.text?.replace(/\ufffc/g, "").trim() ?? "";
  const { text, mentioned } = group ? withoutNames(raw, names) : { text: raw, mentioned: true };
  return {
    platform: "bluebubbles",
    messageId: message.guid,
    chat: { platform: "bluebubbles", chatId: chat.guid },
    chatType: group ? "group" : "dm",
    sender: { id: sender },
    text,
    mentioned,
    replyToId: message.guid,
    sentAt: message.dateCreated,
  };
}
