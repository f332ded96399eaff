/**
 * Buttons on Discord: `OutboundMessage.buttons` become message components (action rows of buttons);
 * a click arrives as an INTERACTION_CREATE, acknowledged at once (deferred update), handed to the
 * gateway as a message of the clicking user whose text is the button's data, and then the prompt is
 * edited to show the choice, without its buttons. `custom_id` holds 100 characters; longer data
 * travels as a short id kept in the adapter's key-value store.
 */
import { type ButtonInteraction, type REST, Routes } from "discord.js";
import type { Logger } from "../../core/logger.js";
import type { InboundMessage, KeyValueStore, OutboundButton } from "../../core/types.js";
import { decodeButtonData, encodeButtonData } from "../shared/button-data.js";
import { restError } from "./errors.js";

/** Discord's limits: `custom_id` characters (kept to bytes here), buttons per row, rows per message. */
const MAX_CUSTOM_ID = 100;
const MAX_PER_ROW = 5;
const MAX_ROWS = 5;
const SECONDARY = 2;

/**
 * The action rows of `buttons` as the REST API takes them. More rows than Discord's 5 are packed 5
 * buttons to a row (ten choices fit in two rows); beyond 5 × 5, the rest is cut.
 */
export function actionRows(buttons: readonly (readonly OutboundButton[])[], kv: KeyValueStore): object[] {
  const seen = new Set<string>();
  const rows = buttons.filter((row) => row.length > 0);
  const packed =
    rows.length <= MAX_ROWS
      ? rows
      : Array.from({ length: Math.ceil(rows.flat().length / MAX_PER_ROW) }, (_, i) =>
          rows.flat().slice(i * MAX_PER_ROW, (i + 1) * MAX_PER_ROW),
        );
  return packed
    .map((row) =>
      row
        .map((b) => ({ label: b.label.slice(0, 80) || "·", id: encodeButtonData(b.data, kv, MAX_CUSTOM_ID) }))
        // Two buttons of one message may not share an id: the first wins.
        .filter((b) => !seen.has(b.id) && seen.add(b.id))
        .slice(0, MAX_PER_ROW)
        .map((b) => ({ type: 2, style: SECONDARY, label: b.label, custom_id: b.id })),
    )
    .filter((row) => row.length > 0)
    .slice(0, MAX_ROWS)
    .map((components) => ({ type: 1, components }));
}

/** A click, as the gateway's message, with what settling the prompt needs. */
export interface DiscordClick {
  inbound: InboundMessage;
  channelId: string;
  messageId: string;
  /** The prompt's text and the clicked button's label ("✓ Approve" goes under it). */
  content: string;
  label: string;
  /** In a server, only the person the prompt answers settles it (the gateway refuses the others). */
  settles: boolean;
}

export class DiscordButtons {
  constructor(
    private readonly rest: REST,
    private readonly kv: KeyValueStore,
    private readonly logger: Logger,
  ) {}

  /**
   * Acknowledges a button click (deferred update: no "interaction failed") and returns it as the
   * clicker's message, or undefined for a button whose data this gateway no longer knows. Never throws.
   */
  async accept(interaction: ButtonInteraction): Promise<DiscordClick | undefined> {
    try {
      await this.rest.post(Routes.interactionCallback(interaction.id, interaction.token), {
        body: { type: 6 },
        auth: false,
      });
    } catch (err) {
      this.logger.warn({ interactionId: interaction.id, err: String(err) }, "discord button ack failed");
    }
    const data = decodeButtonData(interaction.customId, this.kv);
    if (data === undefined) {
      this.logger.info({ interactionId: interaction.id }, "discord click without known button data skipped");
      return undefined;
    }
    const channel = interaction.channel;
    const thread = channel?.isThread() ? channel : undefined;
    const user = interaction.user;
    const prompt = interaction.message;
    const askedId = prompt.reference?.messageId;
    const asked =
      askedId && channel && "messages" in channel ? channel.messages.cache.get(askedId) : undefined;
    return {
      inbound: {
        platform: "discord",
        messageId: interaction.id,
        chat: thread
          ? { platform: "discord", chatId: thread.parentId ?? thread.id, threadId: thread.id }
          : { platform: "discord", chatId: interaction.channelId },
        chatType: interaction.inGuild() ? "group" : "dm",
        sender: {
          id: user.id,
          name: interaction.inCachedGuild()
            ? interaction.member.displayName
            : (user.globalName ?? user.username),
          isBot: user.bot,
        },
        text: data,
        viaButton: true,
        // A click on the bot's own message addresses the bot.
        mentioned: true,
        replyToId: prompt.id,
        sentAt: interaction.createdTimestamp,
      },
      channelId: interaction.channelId,
      messageId: prompt.id,
      content: prompt.content,
      label: ("label" in interaction.component ? interaction.component.label : undefined) ?? data,
      settles: !interaction.inGuild() || !asked || asked.author.bot || asked.author.id === user.id,
    };
  }

  /** Shows the choice under the prompt and removes its buttons. Never throws (logs). */
  async settle(click: DiscordClick): Promise<void> {
    try {
      await this.rest.patch(Routes.channelMessage(click.channelId, click.messageId), {
        body: { content: `${click.content}\n\n✓ ${click.label}`.slice(0, 2000), components: [] },
      });
    } catch (err) {
      this.logger.warn(
        { messageId: click.messageId, err: restError(err, "marking a prompt answered").message },
        "discord prompt not marked as answered",
      );
    }
  }
}
