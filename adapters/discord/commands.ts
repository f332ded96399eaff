/**
 * Native slash commands: the gateway's command menu (`AdapterDeps.commandMenu`; without one /new,
 * /stop, /status, /help), each with an optional `text` option for its arguments, registered as global
 * application commands (bulk overwrite) only when the set changed (a hash in the adapter's durable store, so restarts don't hit Discord's
 * command-registration rate limits), and their interactions turned into the same text commands the
 * gateway answers. The interaction is acknowledged at once (deferred) and the gateway's answer becomes
 * its reply; an interaction the gateway drops has its "thinking…" placeholder removed.
 */
import { createHash } from "node:crypto";
import { type ChatInputCommandInteraction, type REST, Routes } from "discord.js";
import type { Logger } from "../../core/logger.js";
import type { CommandMenuEntry, InboundMessage, InboundOutcome, KeyValueStore } from "../../core/types.js";

/** The commands offered in Discord's `/` menu (descriptions ≤ 100 characters). */
export const NATIVE_COMMANDS = [
  { name: "new", description: "Start a new conversation (the old one stays searchable)" },
  { name: "stop", description: "Stop what Herald is working on" },
  { name: "status", description: "Show this session and what is running" },
  { name: "help", description: "List Herald's commands" },
] as const;

/** Discord's limits: names of 1–32 lowercase letters, digits, `-` and `_`; 100-character descriptions. */
const NAME = /^[-_a-z0-9]{1,32}$/;
const MAX_DESCRIPTION = 100;
const MAX_COMMANDS = 100;
/** The option that carries what follows the command (`/resume 2`, `/title Trip`). */
const ARGS_OPTION = "text";

/** The menu as Discord's bulk overwrite takes it; names Discord cannot show are left out. */
export function discordCommandBodies(entries: readonly CommandMenuEntry[]): Record<string, unknown>[] {
  const seen = new Set<string>();
  const bodies: Record<string, unknown>[] = [];
  for (const entry of entries) {
    const name = entry.name.toLowerCase();
    if (!NAME.test(name) || seen.has(name)) continue;
    seen.add(name);
    const text = entry.description.trim() || name;
    const description = text.length > MAX_DESCRIPTION ? `${text.slice(0, MAX_DESCRIPTION - 1)}…` : text;
    bodies.push({
      name,
      description,
      type: 1,
      contexts: [0, 1],
      integration_types: [0],
      options: [{ type: 3, name: ARGS_OPTION, description: "what follows the command", required: false }],
    });
  }
  return bodies.slice(0, MAX_COMMANDS);
}

const HASH_KEY = "commands.hash";
/** An interaction token lives 15 minutes; give up on answering through it a little earlier. */
const INTERACTION_TTL_MS = 14 * 60_000;

interface Pending {
  applicationId: string;
  token: string;
  timer: NodeJS.Timeout;
}

export class DiscordCommands {
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly rest: REST,
    private readonly kv: KeyValueStore,
    private readonly logger: Logger,
    /** The gateway's menu; asked at registration and for each interaction. @defaultValue NATIVE_COMMANDS */
    private readonly menu: () => readonly CommandMenuEntry[] = () => NATIVE_COMMANDS,
    /** Settles once `menu` is complete (`AdapterDeps.commandMenuReady`). */
    private readonly menuReady?: Promise<unknown>,
  ) {}

  /** Registers the commands when the set differs from the last registration. Returns whether it did. */
  async sync(applicationId: string): Promise<boolean> {
    await this.menuReady;
    const body = discordCommandBodies(this.menu());
    const hash = createHash("sha256").update(JSON.stringify({ applicationId, body })).digest("hex");
    if (this.kv.get(HASH_KEY) === hash) return false;
    await this.rest.put(Routes.applicationCommands(applicationId), { body });
    this.kv.set(HASH_KEY, hash);
    this.logger.info({ count: body.length }, "discord slash commands registered");
    return true;
  }

  /**
   * Acknowledges a slash command (deferred reply) and returns it as a text command message, or undefined
   * for commands Herald does not own. Never throws.
   */
  async accept(interaction: ChatInputCommandInteraction): Promise<InboundMessage | undefined> {
    const name = interaction.commandName;
    await this.menuReady;
    if (!this.menu().some((c) => c.name.toLowerCase() === name)) return undefined;
    const args = interaction.options.getString(ARGS_OPTION)?.trim();
    try {
      await this.rest.post(Routes.interactionCallback(interaction.id, interaction.token), {
        body: { type: 5 },
        auth: false,
      });
      const timer = setTimeout(() => void this.drop(interaction.id), INTERACTION_TTL_MS);
      timer.unref();
      this.pending.set(interaction.id, {
        applicationId: interaction.applicationId,
        token: interaction.token,
        timer,
      });
    } catch (err) {
      // Too late to acknowledge (3 s): the answer goes to the channel as a normal message.
      this.logger.warn({ interactionId: interaction.id, err: String(err) }, "discord interaction ack failed");
    }
    const channel = interaction.channel;
    const thread = channel?.isThread() ? channel : undefined;
    const user = interaction.user;
    return {
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
      text: args ? `/${name} ${args}` : `/${name}`,
      mentioned: true,
      replyToId: interaction.id,
      sentAt: interaction.createdTimestamp,
    };
  }

  /** After the gateway decided: a command it will not answer loses its placeholder. */
  settle(interactionId: string, outcome: InboundOutcome | undefined): void {
    if (outcome === "command" || outcome === "accepted" || outcome === "pairing") return;
    void this.drop(interactionId);
  }

  /** Whether `replyToId` is an interaction still waiting for its answer. */
  owns(replyToId: string | undefined): boolean {
    return replyToId !== undefined && this.pending.has(replyToId);
  }

  /** Posts `content` as the interaction's reply (replacing "thinking…"). Returns the message id. */
  async answer(interactionId: string, content: string, allowedMentions: object): Promise<string> {
    const p = this.pending.get(interactionId);
    if (!p) throw new Error("interaction no longer pending");
    clearTimeout(p.timer);
    this.pending.delete(interactionId);
    const sent = (await this.rest.patch(Routes.webhookMessage(p.applicationId, p.token, "@original"), {
      body: { content, allowed_mentions: allowedMentions },
      auth: false,
    })) as { id: string };
    return sent.id;
  }

  /** Forgets every pending interaction (adapter stop). */
  stop(): void {
    for (const p of this.pending.values()) clearTimeout(p.timer);
    this.pending.clear();
  }

  private async drop(interactionId: string): Promise<void> {
    const p = this.pending.get(interactionId);
    if (!p) return;
    clearTimeout(p.timer);
    this.pending.delete(interactionId);
    try {
      await this.rest.delete(Routes.webhookMessage(p.applicationId, p.token, "@original"), { auth: false });
    } catch (err) {
      this.logger.debug({ interactionId, err: String(err) }, "discord interaction placeholder not removed");
    }
  }
}
