/**
 * Buttons on Slack: `OutboundMessage.buttons` become Block Kit blocks (the text in sections, one
 * actions block per row of buttons); a click arrives as a `block_actions` interactivity payload (HTTP:
 * form-encoded `payload` on the events URL; Socket Mode: an `interactive` envelope), acknowledged, and
 * handed to the gateway as a message of the clicking user whose text is the button's data. A button's
 * `value` holds 2,000 characters; longer data travels as a short id kept in the adapter's store.
 */
import { z } from "zod";
import type { InboundMessage, KeyValueStore, OutboundButton } from "../../core/types.js";
import { decodeButtonData, encodeButtonData } from "../shared/button-data.js";
import { chatTypeOf } from "./parse.js";

/** Prefix of Herald's buttons' `action_id` (the adapter listens for these only). */
export const ACTION_PREFIX = "herald_button_";
const MAX_SECTION_CHARS = 3000;
const MAX_VALUE = 2000;
const MAX_PER_BLOCK = 25;

/** The blocks of a message: `text` (mrkdwn) in sections, then one actions block per row of buttons. */
export function buttonBlocks(
  text: string,
  buttons: readonly (readonly OutboundButton[])[],
  kv: KeyValueStore,
): object[] {
  const sections: object[] = [];
  for (let at = 0; at < text.length; at += MAX_SECTION_CHARS)
    sections.push({
      type: "section",
      text: { type: "mrkdwn", text: text.slice(at, at + MAX_SECTION_CHARS) },
    });
  const actions = buttons
    .filter((row) => row.length > 0)
    .map((row, r) => ({
      type: "actions",
      block_id: `herald_buttons_${r}`,
      elements: row.slice(0, MAX_PER_BLOCK).map((b, i) => ({
        type: "button",
        action_id: `${ACTION_PREFIX}${r}_${i}`,
        text: { type: "plain_text", text: b.label.slice(0, 75) || "·", emoji: true },
        value: encodeButtonData(b.data, kv, MAX_VALUE),
      })),
    }));
  return [...sections, ...actions];
}

/** The parts of a `block_actions` payload the adapter reads. */
export const blockActions = z.looseObject({
  type: z.literal("block_actions"),
  user: z.looseObject({
    id: z.string().min(1),
    name: z.string().optional(),
    username: z.string().optional(),
  }),
  channel: z.looseObject({ id: z.string().min(1) }),
  message: z.looseObject({
    ts: z.string().min(1),
    text: z.string().optional(),
    thread_ts: z.string().optional(),
  }),
  actions: z
    .array(
      z.looseObject({
        action_id: z.string(),
        action_ts: z.string().min(1),
        value: z.string().optional(),
        text: z.looseObject({ text: z.string() }).optional(),
      }),
    )
    .min(1),
});

/** A click, as the gateway's message, with what settling the prompt needs. */
export interface SlackClick {
  inbound: InboundMessage;
  channel: string;
  /** The prompt message's ts and text, and the clicked button's label ("✓ Approve" goes under it). */
  ts: string;
  text: string;
  label: string;
  /** The ts of the thread the prompt is in (the asker's message in a channel), if any. */
  threadTs: string | undefined;
}

/**
 * A `block_actions` payload as the clicker's message; undefined when it is not one of Herald's buttons
 * or its data is no longer known.
 */
export function clickToInbound(body: unknown, kv: KeyValueStore): SlackClick | undefined {
  const parsed = blockActions.safeParse(body);
  if (!parsed.success) return undefined;
  const { user, channel, message } = parsed.data;
  const action = parsed.data.actions.find((a) => a.action_id.startsWith(ACTION_PREFIX));
  const data = action?.value === undefined ? undefined : decodeButtonData(action.value, kv);
  if (!action || data === undefined) return undefined;
  const chatType = chatTypeOf(channel.id, undefined);
  // Channels: every message lives in a thread (the prompt's is the asker's message); DMs: only threads.
  const threadId = chatType === "dm" ? message.thread_ts : (message.thread_ts ?? message.ts);
  return {
    inbound: {
      platform: "slack",
      messageId: `${channel.id}:action:${action.action_ts}`,
      chat: threadId
        ? { platform: "slack", chatId: channel.id, threadId }
        : { platform: "slack", chatId: channel.id },
      chatType,
      sender: { id: user.id, name: user.name ?? user.username },
      text: data,
      viaButton: true,
      mentioned: true,
      replyToId: message.ts,
      sentAt: Math.round(Number(action.action_ts) * 1000) || Date.now(),
    },
    channel: channel.id,
    ts: message.ts,
    text: message.text ?? "",
    label: action.text?.text ?? data,
    threadTs: message.thread_ts,
  };
}
