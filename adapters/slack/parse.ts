/**
 * Slack `message` / `app_mention` events → InboundMessage. Pure functions: no I/O (names and files are
 * filled in by the adapter).
 *
 * Chat mapping: in channels every message lives in a thread (`threadId = thread_ts ?? ts`), so each reply
 * goes into the thread of the message it answers and each thread is its own session. DMs are one chat;
 * `threadId` only when the user wrote inside a thread. `messageId` is `channel:ts`, the same for the
 * `message` and `app_mention` copies of one message and for Slack's retries, so the ledger keeps one.
 */
import type { ChatRef, ChatType, InboundMessage } from "../../core/types.js";
import {
  type SlackFile,
  type SlackIdentity,
  type SlackMessageEvent,
  slackMessageEventSchema,
} from "./types.js";

/** Subtypes that carry a user's new message; all others (edits, deletes, joins, bot posts…) are skipped. */
const USER_SUBTYPES = new Set(["file_share", "thread_broadcast", "me_message"]);

/** What the parser made of one event. */
export type ParsedEvent =
  | { kind: "message"; message: InboundMessage; files: SlackFile[] }
  | { kind: "skip"; reason: string }
  | { kind: "malformed"; issues: string };

/** Slack's `ts` (`"1700000000.000100"`) as epoch ms. */
export function tsToMs(ts: string): number {
  return Math.round(Number(ts) * 1000);
}

/**
 * The chat type from `channel_type`, or from the id's prefix when absent (`app_mention` has none; it
 * never happens in DMs, and DM ids always start with `D`).
 */
export function chatTypeOf(channel: string, channelType: string | null | undefined): ChatType {
  if (channelType) return channelType === "im" ? "dm" : "group";
  return channel.startsWith("D") ? "dm" : "group";
}

/** Is the bot mentioned in Slack-encoded text (`<@U123>` or `<@U123|name>`)? */
export function mentionsUser(text: string, userId: string): boolean {
  return text.includes(`<@${userId}>`) || text.includes(`<@${userId}|`);
}

/**
 * Slack-encoded text → what the user typed: the bot's own mention removed, other mentions and links in
 * readable form (`<@U1>` → `@U1`, `<#C1|general>` → `#general`, `<url|label>` → `[label](url)`),
 * entities decoded.
 */
export function decodeSlackText(text: string, botUserId: string): string {
  const ownMention = new RegExp(`<@${botUserId}(?:\\|[^>]*)?>\\s*`, "g");
  return text
    .replace(ownMention, "")
    .replace(/<@([A-Z0-9]+)(?:\|([^>]*))?>/g, (_, id: string, name?: string) => `@${name || id}`)
    .replace(/<#([A-Z0-9]+)(?:\|([^>]*))?>/g, (_, id: string, name?: string) => `#${name || id}`)
    .replace(/<!(here|channel|everyone)(?:\|[^>]*)?>/g, "@$1")
    .replace(/<!subteam\^[A-Z0-9]+\|([^>]*)>/g, "$1")
    .replace(/<!date\^[^|>]*\|([^>]*)>/g, "$1")
    .replace(/<((?:https?|mailto):[^|>]+)\|([^>]+)>/g, "[$2]($1)")
    .replace(/<((?:https?|mailto):[^|>]+)>/g, "$1")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&")
    .replace(/[ \t]{2,}/g, " ")
    .trim();
}

function skipReason(event: SlackMessageEvent, me: SlackIdentity): string | undefined {
  if (event.subtype && !USER_SUBTYPES.has(event.subtype)) return `subtype ${event.subtype}`;
  if (event.bot_id) return event.bot_id === me.botId ? "own message" : "bot message";
  if (!event.user) return "no user";
  if (event.user === me.botUserId) return "own message";
  return undefined;
}

/**
 * Parses one event payload. Never throws: a payload that does not match is reported as `malformed`
 * (the caller logs and skips it).
 */
export function parseSlackEvent(payload: unknown, me: SlackIdentity): ParsedEvent {
  const result = slackMessageEventSchema.safeParse(payload);
  if (!result.success) {
    return {
      kind: "malformed",
      issues: result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "),
    };
  }
  const event = result.data;
  const reason = skipReason(event, me);
  if (reason) return { kind: "skip", reason };

  const raw = event.text ?? "";
  const chatType = chatTypeOf(event.channel, event.channel_type);
  const threadTs = event.thread_ts ?? undefined;
  const threadId = chatType === "dm" ? threadTs : (threadTs ?? event.ts);
  const chat: ChatRef = threadId
    ? { platform: "slack", chatId: event.channel, threadId }
    : { platform: "slack", chatId: event.channel };
  const name = event.user_profile?.display_name || event.user_profile?.real_name || undefined;
  const message: InboundMessage = {
    platform: "slack",
    messageId: `${event.channel}:${event.ts}`,
    chat,
    chatType,
    sender: { id: event.user!, name },
    text: decodeSlackText(raw, me.botUserId),
    mentioned: chatType === "dm" || event.type === "app_mention" || mentionsUser(raw, me.botUserId),
    replyToId: event.ts,
    sentAt: tsToMs(event.ts),
    meta: threadTs ? { ts: event.ts, threadTs } : { ts: event.ts },
  };
  const files = (event.files ?? []).filter(
    (f) => !f.mode || !["tombstone", "hidden_by_limit", "external"].includes(f.mode),
  );
  return { kind: "message", message, files };
}
