/**
 * A Bot Framework activity → `InboundMessage`. Chats: `teams:<conversation id>`; a channel's reply
 * chain (Teams gives it as `<channel id>;messageid=<root>`) is the thread, so each chain is its own
 * session and replies go into it. Personal chats are DMs; group chats and channels are groups, where a
 * message addresses the bot when it carries a mention entity of the bot (its `<at>…</at>` is removed
 * from the text). A click on an Adaptive Card's Action.Submit arrives as a message whose `value` holds
 * the button's data: it becomes the clicker's message with that text. `messageId` is
 * `<conversation>|<activity id>`, stable across redeliveries.
 */
import type { ChatRef, InboundMessage } from "../../core/types.js";
import { activitySchema, mentionSchema, type TeamsActivity } from "./types.js";

/** Thrown for an activity that does not have the documented shape (logged, answered 400). */
export class MalformedActivityError extends Error {
  constructor(detail: string) {
    super(`malformed activity: ${detail}`);
    this.name = "MalformedActivityError";
  }
}

/** The key of a button's data in an Action.Submit's `data` (and so in the click's `value`). */
export const BUTTON_KEY = "heraldButton";
/** The key of the clicked button's label (the answered card shows it). */
export const LABEL_KEY = "heraldLabel";

const THREAD_MARK = ";messageid=";

/** A conversation id split into the chat and the reply chain it names, if any. */
export function splitConversation(conversationId: string): { chatId: string; threadId?: string } {
  const at = conversationId.indexOf(THREAD_MARK);
  if (at < 0) return { chatId: conversationId };
  return { chatId: conversationId.slice(0, at), threadId: conversationId.slice(at + THREAD_MARK.length) };
}

/** The conversation id a chat's messages go to (the reply chain's, in a thread). */
export function conversationOf(chat: ChatRef): string {
  return chat.threadId ? `${chat.chatId}${THREAD_MARK}${chat.threadId}` : chat.chatId;
}

/**
 * Where a chat string's thread starts: Teams conversation ids hold colons (`19:…@thread.tacv2`,
 * `a:1…`), a reply chain's id is the digits after the last one of a thread conversation.
 */
export function splitTeamsChatId(rest: string): { chatId: string; threadId?: string } {
  const m = /^(.*@thread\.[a-z0-9]+):(\d+)$/i.exec(rest);
  return m ? { chatId: m[1]!, threadId: m[2]! } : { chatId: rest };
}

/** The native activity id inside a `messageId` of this adapter. */
export const nativeIdOf = (messageId: string) => messageId.slice(messageId.lastIndexOf("|") + 1);

/** Validates an activity body. @throws MalformedActivityError */
export function readActivity(body: unknown): TeamsActivity {
  const parsed = activitySchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new MalformedActivityError(`${issue?.path.join(".") || "body"}: ${issue?.message ?? "invalid"}`);
  }
  return parsed.data;
}

/** The text with the bot's own `<at>` mentions removed and other mentions as plain names. */
function withoutMentions(activity: TeamsActivity): { text: string; mentioned: boolean } {
  let text = activity.text ?? "";
  let mentioned = false;
  for (const entity of activity.entities ?? []) {
    const mention = mentionSchema.safeParse(entity);
    if (!mention.success || mention.data.mentioned.id !== activity.recipient.id) continue;
    mentioned = true;
    if (mention.data.text) text = text.split(mention.data.text).join("");
  }
  text = text.replace(/<at>([^<]*)<\/at>/g, "$1");
  return {
    text: text
      .replace(/[ \t]+([,.!?:;])/g, "$1")
      .replace(/[ \t]{2,}/g, " ")
      .trim(),
    mentioned,
  };
}

/** The data of a click on one of Herald's card buttons, if the activity is one. */
export function clickedData(activity: TeamsActivity): string | undefined {
  const value = activity.value;
  if (typeof value !== "object" || value === null) return undefined;
  const data = (value as Record<string, unknown>)[BUTTON_KEY];
  return typeof data === "string" ? data : undefined;
}

/**
 * A message activity as the gateway's message; undefined for what Herald ignores (other activity
 * types, its own messages, empty messages).
 */
export function parseActivity(activity: TeamsActivity): InboundMessage | undefined {
  if (activity.type !== "message" || !activity.id) return undefined;
  if (activity.from.id === activity.recipient.id) return undefined;
  const click = clickedData(activity);
  const { text, mentioned } = withoutMentions(activity);
  const files = (activity.attachments ?? []).filter((a) => !a.contentType.startsWith("text/html"));
  if (click === undefined && !text && files.length === 0) return undefined;
  const { chatId, threadId } = splitConversation(activity.conversation.id);
  const isDm = (activity.conversation.conversationType ?? "personal") === "personal";
  const sentAt = activity.timestamp ? Date.parse(activity.timestamp) : Number.NaN;
  return {
    platform: "teams",
    messageId: `${activity.conversation.id}|${activity.id}`,
    chat: threadId ? { platform: "teams", chatId, threadId } : { platform: "teams", chatId },
    chatType: isDm ? "dm" : "group",
    sender: {
      id: activity.from.aadObjectId ?? activity.from.id,
      name: activity.from.name || undefined,
    },
    text: click ?? text,
    mentioned: isDm || mentioned || click !== undefined,
    ...(click !== undefined ? { viaButton: true } : {}),
    replyToId: activity.id,
    sentAt: Number.isNaN(sentAt) ? undefined : sentAt,
  };
}
