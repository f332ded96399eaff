/**
 * A Google Chat event → `InboundMessage`. Chats: `googlechat:spaces/<id>`; in a space every message is
 * in a thread (`threadId` is the thread's id), so each thread is its own session and replies go into
 * it; a DM (`DIRECT_MESSAGE`) has none. In spaces Chat sends the app only what mentions it, and
 * `argumentText` is the text without the mention. A `CARD_CLICKED` event on one of Herald's buttons
 * becomes the clicker's message with the button's data. User ids are the number of `users/<number>`.
 */
import type { InboundMessage } from "../../core/types.js";
import { type ChatEvent, eventSchema } from "./types.js";

/** The function name of Herald's card buttons, and the keys of their parameters. */
export const BUTTON_FUNCTION = "heraldButton";
export const DATA_KEY = "data";
export const LABEL_KEY = "label";

/** Thrown for an event that does not have the documented shape (logged, answered 400). */
export class MalformedEventError extends Error {
  constructor(detail: string) {
    super(`malformed event: ${detail}`);
    this.name = "MalformedEventError";
  }
}

/** Validates an event body. @throws MalformedEventError */
export function readEvent(body: unknown): ChatEvent {
  const parsed = eventSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new MalformedEventError(`${issue?.path.join(".") || "body"}: ${issue?.message ?? "invalid"}`);
  }
  return parsed.data;
}

/** `users/123` → `123` (how allowlists name a user). */
export const userIdOf = (name: string) => name.replace(/^users\//, "");

/** The thread's id inside its resource name (`spaces/A/threads/B` → `B`). */
const threadIdOf = (name: string | undefined) => (name ? name.slice(name.lastIndexOf("/") + 1) : undefined);

/** The thread resource name of a chat's thread. */
export const threadName = (chatId: string, threadId: string) => `${chatId}/threads/${threadId}`;

const isDm = (event: ChatEvent) =>
  event.space.spaceType === "DIRECT_MESSAGE" ||
  event.space.type === "DM" ||
  event.space.singleUserBotDm === true;

/** The button data and label of a click on one of Herald's buttons, if the event is one. */
export function clicked(event: ChatEvent): { data: string; label: string } | undefined {
  if (event.type !== "CARD_CLICKED" || event.action?.actionMethodName !== BUTTON_FUNCTION) return undefined;
  const params = new Map((event.action.parameters ?? []).map((p) => [p.key, p.value]));
  const data = params.get(DATA_KEY);
  return data === undefined ? undefined : { data, label: params.get(LABEL_KEY) ?? data };
}

/** An event as the gateway's message; undefined for events Herald does not answer (added, removed…). */
export function parseEvent(event: ChatEvent): InboundMessage | undefined {
  const message = event.message;
  const sender = event.user ?? message?.sender;
  if (!message || !sender || sender.type === "BOT") return undefined;
  const click = clicked(event);
  if (event.type !== "MESSAGE" && !click) return undefined;
  const dm = isDm(event);
  const text =
    click?.data ?? (dm ? (message.text ?? "") : (message.argumentText ?? message.text ?? "")).trim();
  if (!text && !(message.attachment?.length ?? 0)) return undefined;
  const threadId = dm ? undefined : threadIdOf(message.thread?.name);
  const sentAt = Date.parse(click ? (event.eventTime ?? "") : (message.createTime ?? event.eventTime ?? ""));
  return {
    platform: "googlechat",
    // A click has no id of its own; its event time tells a second click from a redelivery.
    messageId: click ? `${message.name}/click/${event.eventTime ?? ""}` : message.name,
    chat: threadId
      ? { platform: "googlechat", chatId: event.space.name, threadId }
      : { platform: "googlechat", chatId: event.space.name },
    chatType: dm ? "dm" : "group",
    sender: { id: userIdOf(sender.name), name: sender.displayName || undefined },
    text,
    // Chat sends a space's messages to the app only when they mention it.
    mentioned: true,
    ...(click ? { viaButton: true } : {}),
    replyToId: message.name,
    sentAt: Number.isNaN(sentAt) ? undefined : sentAt,
  };
}
