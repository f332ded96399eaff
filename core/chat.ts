/**
 * Chat strings and session keys. A chat is `platform:chatId[:threadId]`; a session key adds the chat
 * type and, in groups with per-user sessions, the sender. The session key is also the ordering key.
 *
 * Bot accounts and agents. A platform's second bot account (`telegram.accounts`) is a platform of its
 * own in chat strings, `telegram@family:123`: its DMs, sessions, outbox items, cron targets and
 * allowlists are apart from the default account's, which keeps plain `telegram:123`. An agent other
 * than the default one (`agents:`) prefixes the session key with its name, `family/telegram:dm:123`:
 * one chat may have a session with each agent, and a turn's agent is read back from its key, on the
 * gateway and on every worker alike. The default agent's keys have no prefix (they are as they were).
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
  const split = splitters[platform] ?? splitters[basePlatform(platform)];
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
  const agent = parts.agent ? `${parts.agent}/` : "";
  if (chat.threadId) return `${agent}${chat.platform}:thread:${chat.chatId}:${chat.threadId}`;
  if (chatType === "dm") return `${agent}${chat.platform}:dm:${chat.chatId}`;
  return groupMode === "shared"
    ? `${agent}${chat.platform}:group:${chat.chatId}`
    : `${agent}${chat.platform}:group:${chat.chatId}:u:${userId}`;
}

/** What a platform name is made of: `telegram@family` is account `family` of platform `telegram`. */
export interface PlatformAccount {
  /** The platform module's name (`telegram`). */
  platform: string;
  /** The bot account's name; undefined for the platform's default account. */
  account?: string | undefined;
}

/** `telegram@family` → `{ platform: "telegram", account: "family" }`; `telegram` → `{ platform: "telegram" }`. */
export function splitPlatform(name: string): PlatformAccount {
  const at = name.indexOf("@");
  return at > 0 ? { platform: name.slice(0, at), account: name.slice(at + 1) } : { platform: name };
}

/** The platform module's name of a (maybe account-qualified) platform name: `telegram@family` → `telegram`. */
export function basePlatform(name: string): string {
  return splitPlatform(name).platform;
}

/** The platform name of `account` of `platform`; the default account (undefined) is the platform itself. */
export function accountPlatform(platform: string, account: string | undefined): string {
  return account ? `${platform}@${account}` : platform;
}

/**
 * The agent a session key belongs to: the prefix before `/` (`family/telegram:dm:1` → `family`), or
 * undefined for the default agent's keys.
 */
export function agentOfKey(key: string): string | undefined {
  const slash = key.indexOf("/");
  if (slash <= 0) return undefined;
  const colon = key.indexOf(":");
  return colon < 0 || slash < colon ? key.slice(0, slash) : undefined;
}

/**
 * The prefix of the session keys a turn may search (its own platform's, of its own agent):
 * `telegram:` for the default agent, `family/telegram:` for agent `family`.
 */
export function searchKeyPrefix(origin: { sessionKey: string; chat: ChatRef }): string {
  const agent = agentOfKey(origin.sessionKey);
  return `${agent ? `${agent}/` : ""}${origin.chat.platform}:`;
}

/** A session key without its agent prefix (`family/telegram:dm:1` → `telegram:dm:1`). */
export function keyWithoutAgent(key: string): string {
  const agent = agentOfKey(key);
  return agent ? key.slice(agent.length + 1) : key;
}
