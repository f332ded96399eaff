/**
 * A signal-cli `receive` notification → `InboundMessage`. Chats: a DM is `signal:<sender number or
 * UUID>`, a group `signal:group.<base64 group id>`. A message is identified by its sender and timestamp
 * (Signal's own reference for quotes and reactions): `messageId` is `<timestamp>.<sender>`.
 */
import type { ChatRef, InboundMessage } from "../../core/types.js";
import type { SignalMention, SignalReceive } from "./types.js";

/** The chat-id prefix of groups. */
export const GROUP_PREFIX = "group.";

/** Who the bot is, for mentions and replies. */
export interface SignalMe {
  account: string;
  uuid?: string | undefined;
}

/** `{ timestamp, author }` of a message id made by `parseReceive`. */
export function messageRef(messageId: string): { timestamp: number; author: string } | undefined {
  const dot = messageId.indexOf(".");
  const timestamp = Number(messageId.slice(0, dot));
  if (dot < 1 || !Number.isSafeInteger(timestamp)) return undefined;
  return { timestamp, author: messageId.slice(dot + 1) };
}

/** The send target of a chat: `{ groupId }` or `{ recipient: [id] }`. */
export function targetOf(chat: ChatRef): { groupId: string } | { recipient: string[] } {
  return chat.chatId.startsWith(GROUP_PREFIX)
    ? { groupId: chat.chatId.slice(GROUP_PREFIX.length) }
    : { recipient: [chat.chatId] };
}

const isMe = (me: SignalMe, who: { number?: string | null | undefined; uuid?: string | null | undefined }) =>
  (who.number != null && who.number === me.account) || (me.uuid !== undefined && who.uuid === me.uuid);

/** The text with the bot's mentions removed and other mentions as `@name`. */
function textWithout(text: string, mentions: readonly SignalMention[], me: SignalMe): string {
  let out = text;
  for (const m of [...mentions].sort((a, b) => b.start - a.start)) {
    const replacement = isMe(me, m) ? "" : `@${m.name ?? m.number ?? m.uuid ?? "someone"}`;
    out = out.slice(0, m.start) + replacement + out.slice(m.start + m.length);
  }
  return out.replace(/\s{2,}/g, " ").trim();
}

/** The message, or undefined for what Herald ignores (receipts, typing, sync, its own messages, empty). */
export function parseReceive(params: SignalReceive, me: SignalMe): InboundMessage | undefined {
  const env = params.envelope;
  const data = env?.dataMessage;
  if (!env || !data) return undefined;
  const sender = env.sourceNumber ?? env.sourceUuid ?? env.source;
  if (!sender || isMe(me, { number: env.sourceNumber ?? env.source, uuid: env.sourceUuid })) return undefined;
  const text = data.message ?? "";
  const hasFiles = (data.attachments?.length ?? 0) > 0;
  if (!text.trim() && !hasFiles) return undefined;
  const group = data.groupInfo?.groupId;
  const mentions = data.mentions ?? [];
  const repliedToMe =
    data.quote !== undefined &&
    isMe(me, { number: data.quote.authorNumber ?? data.quote.author, uuid: data.quote.authorUuid });
  const messageId = `${data.timestamp ?? env.timestamp}.${sender}`;
  return {
    platform: "signal",
    messageId,
    chat: { platform: "signal", chatId: group ? `${GROUP_PREFIX}${group}` : sender },
    chatType: group ? "group" : "dm",
    sender: { id: sender, name: env.sourceName || undefined },
    text: textWithout(text, mentions, me),
    mentioned: !group || mentions.some((m) => isMe(me, m)) || repliedToMe,
    replyToId: messageId,
    sentAt: data.timestamp ?? env.timestamp,
  };
}
