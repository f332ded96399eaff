/**
 * The inbound pipeline: one queue per channel (so a channel's messages reach the gateway in order),
 * parse, download attachments, plan an auto-thread, and await the gateway's `onMessage` (retried a few
 * times when recording fails). Every fault is logged here; nothing escapes to discord.js.
 */
import type { Message } from "discord.js";
import type { Logger } from "../../core/logger.js";
import type { InboundHandler, InboundMessage, InboundOutcome } from "../../core/types.js";
import type { BackfillCursors } from "./backfill.js";
import { downloadAttachments } from "./media.js";
import { parseMessage } from "./parse.js";
import type { DiscordOutbound } from "./send.js";

export interface InboundOptions {
  logger: Logger;
  cacheDir: string;
  maxBytes: number;
  autoThread: boolean;
  allowBots: boolean;
  /** Replies to messages are streamed into the chat (`stream: edit`). */
  stream?: boolean | undefined;
  outbound: DiscordOutbound;
  /** Where the newest recorded message of each channel is kept (catching up after a restart). */
  cursors?: BackfillCursors | undefined;
  /** Delays between attempts to hand a message to the gateway. @defaultValue [500, 2000, 5000] */
  retryDelaysMs?: number[];
}

/** A thread name from the first line of the question (Discord allows 1–100 characters). */
export function threadName(text: string, senderName: string | undefined): string {
  const first = (text.split("\n").find((l) => l.trim()) ?? "").replace(/[*_`~|>#]/g, "").trim();
  const name = first || `Chat with ${senderName ?? "you"}`;
  return [...name].length > 80 ? `${[...name].slice(0, 79).join("")}…` : name;
}

export class DiscordInbound {
  private readonly queues = new Map<string, Promise<void>>();
  /** Ids recently handed over, so a catch-up racing a live event hands a message over once. */
  private readonly recent = new Set<string>();
  private handler: InboundHandler | undefined;
  private botId: () => string = () => "";

  constructor(private readonly options: InboundOptions) {}

  /** Starts passing messages to `handler`; `botId` reads the bot's user id (known once logged in). */
  open(handler: InboundHandler, botId: () => string): void {
    this.handler = handler;
    this.botId = botId;
  }

  /** Queues a message from discord.js. Returns at once; never throws. */
  accept(message: Message): void {
    this.enqueue(message.channelId, () => this.handle(message));
  }

  /**
   * Queues work on a channel's queue (slash commands keep their place among messages). `task` must not
   * throw; faults are logged anyway.
   */
  enqueue(channelId: string, task: () => Promise<void>): void {
    const previous = this.queues.get(channelId) ?? Promise.resolve();
    const next = previous.then(task).catch((err: unknown) => {
      this.options.logger.error({ channelId, err: String(err) }, "discord inbound task failed");
    });
    this.queues.set(channelId, next);
    void next.finally(() => {
      if (this.queues.get(channelId) === next) this.queues.delete(channelId);
    });
  }

  /** Resolves when every queued message was handled (or `timeoutMs` passed). */
  async idle(timeoutMs = 5000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([Promise.allSettled([...this.queues.values()]), timeout]);
    clearTimeout(timer);
  }

  /** Stops passing messages on (queued ones are dropped). */
  close(): void {
    this.handler = undefined;
  }

  /** Handles one message now (callers run it on the channel's queue). Never throws. */
  async handle(message: Message): Promise<void> {
    const log = this.options.logger;
    try {
      if (!this.handler || this.recent.has(message.id)) return;
      // A thread discord.js has not cached (no THREAD_CREATE seen) lacks its parent: ask for it.
      const channel = message.channel;
      if (message.inGuild() && (channel.partial || (channel.isThread() && !channel.parentId))) {
        await channel.fetch(true);
      }
      const parsed = parseMessage(message, { botId: this.botId(), allowBots: this.options.allowBots });
      if (parsed.kind === "skip") {
        log.debug({ messageId: message.id, reason: parsed.reason }, "discord message skipped");
        return;
      }
      const inbound = parsed.message;
      const files = await downloadAttachments(message, {
        cacheDir: this.options.cacheDir,
        maxBytes: this.options.maxBytes,
        logger: log,
      });
      if (files.attachments.length > 0) inbound.attachments = files.attachments;
      if (files.notes.length > 0) inbound.text = [inbound.text, ...files.notes].filter(Boolean).join("\n");
      if (this.options.stream) inbound.streamReply = true;
      if (this.options.autoThread && parsed.threadable && inbound.mentioned) {
        // A thread opened from a message has the message's id, so the chat is known before it exists;
        // it is opened on the first typing or send, so ignored messages leave no empty threads.
        inbound.chat = { ...inbound.chat, threadId: message.id };
        this.options.outbound.planThread(
          inbound.chat.chatId,
          message.id,
          threadName(inbound.text, inbound.sender.name),
        );
      }
      const outcome = await this.handOver(inbound);
      if (outcome !== undefined) {
        this.remember(message.id);
        this.options.cursors?.seen(message.channelId, message.id);
      }
    } catch (err) {
      log.error({ messageId: message.id, err: String(err) }, "discord inbound message failed");
    }
  }

  private remember(id: string): void {
    this.recent.add(id);
    if (this.recent.size > 2000) this.recent.delete(this.recent.values().next().value!);
  }

  /**
   * Hands a message to the gateway and waits until it is recorded; retried when recording fails.
   * Returns the gateway's outcome, or undefined when it never got recorded. Never throws.
   */
  async handOver(inbound: InboundMessage): Promise<InboundOutcome | undefined> {
    const delays = this.options.retryDelaysMs ?? [500, 2000, 5000];
    for (let attempt = 0; ; attempt++) {
      const handler = this.handler;
      if (!handler) return undefined;
      try {
        return await handler(inbound);
      } catch (err) {
        const delay = delays[attempt];
        if (delay === undefined) {
          this.options.logger.error(
            { messageId: inbound.messageId, err: String(err) },
            "discord message could not be recorded; giving up",
          );
          return undefined;
        }
        this.options.logger.warn(
          { messageId: inbound.messageId, err: String(err) },
          "recording failed; retrying",
        );
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }
}
