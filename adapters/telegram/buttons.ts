/**
 * Buttons on Telegram: `OutboundMessage.buttons` become an inline keyboard; a click arrives as a
 * `callback_query` update, which becomes an `InboundMessage` from the clicking user whose text is the
 * button's data. `callback_data` holds at most 64 bytes: longer data travels as a short id kept in the
 * adapter's key-value store (`adapters/shared/button-data.ts`).
 */
import { z } from "zod";
import type { InboundMessage, KeyValueStore, OutboundButton } from "../../core/types.js";
import { decodeButtonData, encodeButtonData } from "../shared/button-data.js";
import { telegramMessage } from "./parse.js";

/** Telegram's limit on `callback_data`, in bytes. */
export const MAX_CALLBACK_BYTES = 64;

/** An inline keyboard as the Bot API takes it. */
export interface InlineKeyboard {
  inline_keyboard: { text: string; callback_data: string }[][];
}

/** The inline keyboard of `buttons`; labels are cut to what Telegram shows. */
export function inlineKeyboard(
  buttons: readonly (readonly OutboundButton[])[],
  kv: KeyValueStore,
): InlineKeyboard {
  return {
    inline_keyboard: buttons
      .filter((row) => row.length > 0)
      .map((row) =>
        row.map((b) => ({
          text: b.label.slice(0, 64) || "·",
          callback_data: encodeButtonData(b.data, kv, MAX_CALLBACK_BYTES),
        })),
      ),
  };
}

const user = z.looseObject({
  id: z.number().int(),
  is_bot: z.boolean().optional(),
  first_name: z.string().optional(),
  last_name: z.string().optional(),
  username: z.string().optional(),
});

/** The parts of a `CallbackQuery` the adapter reads. */
export const callbackQuery = z.looseObject({
  id: z.string().min(1),
  from: user,
  message: telegramMessage.optional(),
  data: z.string().optional(),
});

export type CallbackQuery = z.infer<typeof callbackQuery>;

/** What a click means: the gateway's message, and what to show on the prompt once it is taken. */
export interface Click {
  inbound: InboundMessage;
  /** The clicked button's label (for "✓ Approve" under the prompt). */
  label: string;
  /** The prompt message's chat and id, text and entities (to edit it). */
  prompt: { chatId: number; messageId: number; text: string; entities?: unknown[] | undefined };
  /**
   * Whether the clicker may settle the prompt: in a group where the prompt answers someone, only that
   * person (the gateway refuses the others' answers, so their click leaves the buttons in place).
   */
  settles: boolean;
}

/**
 * A click as the gateway's message from the clicking user. Undefined when there is nothing to act on:
 * no data, no message (too old), or data this gateway no longer knows.
 */
export function clickToInbound(query: CallbackQuery, kv: KeyValueStore): Click | undefined {
  const message = query.message;
  if (query.data === undefined || !message || message.date === 0) return undefined;
  const data = decodeButtonData(query.data, kv);
  if (data === undefined) return undefined;
  const chatId = String(message.chat.id);
  const threadId =
    message.is_topic_message && message.message_thread_id !== undefined
      ? String(message.message_thread_id)
      : undefined;
  const keyboard = (message["reply_markup"] as InlineKeyboard | undefined)?.inline_keyboard ?? [];
  const label = keyboard.flat().find((b) => b.callback_data === query.data)?.text ?? data;
  const name = [query.from.first_name, query.from.last_name].filter(Boolean).join(" ") || query.from.username;
  const asker = message.reply_to_message?.from;
  const group = message.chat.type !== "private";
  return {
    inbound: {
      platform: "telegram",
      // A callback query's id is unique and the same on every redelivery of the update.
      messageId: `${chatId}:cb:${query.id}`,
      chat: threadId ? { platform: "telegram", chatId, threadId } : { platform: "telegram", chatId },
      chatType: group ? "group" : "dm",
      sender: { id: String(query.from.id), name, isBot: query.from.is_bot ?? false },
      text: data,
      viaButton: true,
      // A click on the bot's own message addresses the bot.
      mentioned: true,
      replyToId: String(message.message_id),
      sentAt: Date.now(),
    },
    label,
    prompt: {
      chatId: message.chat.id,
      messageId: message.message_id,
      text: message.text ?? "",
      entities: message.entities,
    },
    settles: !group || !asker || asker.is_bot === true || asker.id === query.from.id,
  };
}
