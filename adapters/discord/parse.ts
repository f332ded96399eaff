/**
 * A discord.js Message → the gateway's InboundMessage: which chat (a thread is its own chat with the
 * parent channel as `chatId`), DM or group, who wrote it, whether the bot was addressed (a user mention,
 * a reply to the bot, a mention of the bot's managed role; always in DMs), and the text with the bot's
 * own mention removed and other mentions made readable. Attachments are downloaded elsewhere.
 */
import type { Message } from "discord.js";
import type { ChatRef, InboundMessage } from "../../core/types.js";
import type { SkipReason } from "./types.js";

export interface ParseContext {
  /** The bot's user id. */
  botId: string;
  /** Pass on messages of other bots and webhooks. */
  allowBots: boolean;
}

export type ParseResult =
  | { kind: "skip"; reason: SkipReason }
  | {
      kind: "message";
      message: InboundMessage;
      /** A server text channel that is not a thread (where auto-thread may open one). */
      threadable: boolean;
    };

/**
 * Herald's own commands typed as text address the bot even without a mention (as `/cmd` does in
 * Telegram groups); other `/words` do not, since they may be meant for another bot.
 */
const HERALD_COMMAND = /^\s*\/(new|reset|stop|status|help)(\s|$)/i;

/** Names to show instead of raw `<@id>`, `<@&id>`, `<#id>` tokens. */
export interface MentionNames {
  users: Map<string, string>;
  roles: Map<string, string>;
  channels: Map<string, string>;
}

/**
 * Removes the bot's own mentions (`<@id>`, `<@!id>`, its role `<@&id>`) and turns the other mention
 * tokens into `@name` / `#name` so the model reads what the user saw.
 */
export function cleanText(content: string, ownTokens: string[], names: MentionNames): string {
  let text = content;
  for (const token of ownTokens) text = text.split(token).join(" ");
  text = text
    .replace(/<@!?(\d+)>/g, (m, id: string) => (names.users.has(id) ? `@${names.users.get(id)}` : m))
    .replace(/<@&(\d+)>/g, (m, id: string) => (names.roles.has(id) ? `@${names.roles.get(id)}` : m))
    .replace(/<#(\d+)>/g, (m, id: string) => (names.channels.has(id) ? `#${names.channels.get(id)}` : m));
  return text
    .replace(/[ \t]{2,}/g, " ")
    .replace(/^[ \t]+|[ \t]+$/gm, "")
    .trim();
}

/** The chat of a message: threads carry their parent channel as `chatId` and themselves as `threadId`. */
export function chatOf(message: Message): ChatRef {
  const channel = message.channel;
  if (channel.isThread()) {
    return { platform: "discord", chatId: channel.parentId ?? channel.id, threadId: channel.id };
  }
  return { platform: "discord", chatId: channel.id };
}

/** The ids of roles that stand for the bot (its managed role). */
function botRoleIds(message: Message, botId: string): string[] {
  const ids = new Set<string>();
  const managed = message.guild?.roles.botRoleFor(botId);
  if (managed) ids.add(managed.id);
  for (const role of message.mentions.roles.values()) if (role.tags?.botId === botId) ids.add(role.id);
  return [...ids];
}

function mentionNames(message: Message): MentionNames {
  const users = new Map<string, string>();
  for (const user of message.mentions.users.values()) users.set(user.id, user.globalName ?? user.username);
  for (const member of message.mentions.members?.values() ?? []) users.set(member.id, member.displayName);
  const roles = new Map([...message.mentions.roles.values()].map((r) => [r.id, r.name] as const));
  const channels = new Map<string, string>();
  for (const channel of message.mentions.channels.values()) {
    if ("name" in channel && typeof channel.name === "string") channels.set(channel.id, channel.name);
  }
  return { users, roles, channels };
}

/** Turns one Discord message into an InboundMessage, or says why it is skipped. Never throws. */
export function parseMessage(message: Message, ctx: ParseContext): ParseResult {
  const author = message.author;
  if (author.id === ctx.botId) return { kind: "skip", reason: "own" };
  if ((author.bot || message.webhookId) && !ctx.allowBots) return { kind: "skip", reason: "bot" };
  if (message.system) return { kind: "skip", reason: "system" };
  if (!message.content.trim() && message.attachments.size === 0) return { kind: "skip", reason: "empty" };

  const isDm = !message.inGuild();
  const roleIds = isDm ? [] : botRoleIds(message, ctx.botId);
  const repliedToBot =
    message.mentions.repliedUser?.id === ctx.botId ||
    (message.reference?.messageId !== undefined &&
      message.channel.messages.cache.get(message.reference.messageId)?.author.id === ctx.botId);
  const mentioned =
    isDm ||
    HERALD_COMMAND.test(message.content) ||
    message.mentions.users.has(ctx.botId) ||
    repliedToBot ||
    roleIds.some((id) => message.mentions.roles.has(id));

  const ownTokens = [`<@${ctx.botId}>`, `<@!${ctx.botId}>`, ...roleIds.map((id) => `<@&${id}>`)];
  const chat = chatOf(message);
  const inbound: InboundMessage = {
    platform: "discord",
    messageId: message.id,
    chat,
    chatType: isDm ? "dm" : "group",
    sender: {
      id: author.id,
      name: message.member?.displayName ?? author.globalName ?? author.username,
      isBot: author.bot || message.webhookId !== null,
    },
    text: cleanText(message.content, ownTokens, mentionNames(message)),
    mentioned,
    replyToId: message.id,
    sentAt: message.createdTimestamp,
  };
  const threadable = !isDm && !chat.threadId && "threads" in message.channel;
  return { kind: "message", message: inbound, threadable };
}
