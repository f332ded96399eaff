/**
 * Chat strings and session keys. A chat is `platform:chatId[:threadId]`; a session key adds the chat
 * type and, in groups with per-user sessions, the sender. The session key is also the ordering key.
 */
import type { ChatIdSplitter } from "./platform.js";
import type { ChatRef, GroupSessionMode, SessionKeyParts } from "./types.js";

/** `telegram:123:45` from `{ platform: "telegram", chatId: "123", threadId: "45" }`. */
export function formatChat(chat: ChatRef): string {
  return chat.threadId
    ? `${chat.platform}:${chat.chatId}:${chat.threadId}`
    : `${chat.platform}:${chat.chatId}`;
}

/**
 * Parses a chat string. Returns undefined when it has no `platform:` prefix or no chat id. The thread
 * starts at the second colon, unless the platform's module splits its own ids (`splitters`: Matrix room
 * ids hold colons).
 */
export function parseChat(
  value: string,
  splitters: Readonly<Record<string, ChatIdSplitter | undefined>> = {},
): ChatRef | undefined {
  const colon = value.indexOf(":");
  if (colon <= 0) return undefined;
  const platform = value.slice(0, colon);
  const rest = value.slice(colon + 1);
  if (!rest) return undefined;
  const split = splitters[platform];
  if (split) {
    const { chatId, threadId } = split(rest);
    return threadId ? { platform, chatId, threadId } : { platform, chatId };
  }
  const second = rest.indexOf(":");
  if (second < 0) return { platform, chatId: rest };
  const chatId = rest.slice(0, second);
  const threadId = rest.slice(second + 1);
  if (!chatId) return undefined;
  return threadId ? { platform, chatId, threadId } : { platform, chatId };
}

/** True when both refer to the same chat and thread. */
export function sameChat(a: ChatRef, b: ChatRef): boolean {
  return a.platform === b.platform && a.chatId === b.chatId && (a.threadId ?? "") === (b.threadId ?? "");
}

/**
 * The session key of a message's sender in its chat.
 * - DM: one session per chat: `telegram:dm:123`
 * - thread (any chat type): shared by everyone in it: `slack:thread:C1:1700000000.0001`
 * - group, per-user (default): `discord:group:42:u:7`; shared: `discord:group:42`
 */
export function sessionKey(parts: SessionKeyParts, groupMode: GroupSessionMode = "per_user"): string {
  const { chat, chatType, userId } = parts;
  if (chat.threadId) return `${chat.platform}:thread:${chat.chatId}:${chat.threadId}`;
  if (chatType === "dm") return `${chat.platform}:dm:${chat.chatId}`;
  return groupMode === "shared"
    ? `${chat.platform}:group:${chat.chatId}`
    : `${chat.platform}:group:${chat.chatId}:u:${userId}`;
}
