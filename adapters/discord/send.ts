/**
 * Outbound calls over discord.js's REST client: messages (chunked, idempotent through `nonce` +
 * `enforce_nonce`, mention-safe through `allowed_mentions`, files attached), coalesced edits of the
 * progress message, deletes, and throttled typing. Also opens a planned auto-thread on first use and
 * reaches users by id through a DM channel.
 */
import { basename } from "node:path";
import { type RawFile, type REST, Routes } from "discord.js";
import { PlatformError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { ChatRef, OutboundFile, OutboundMessage, SendOptions, SendResult } from "../../core/types.js";
import { readOutboundFile } from "../shared/media.js";
import { type PreviewMessage, sameChunk } from "../shared/reply-stream.js";
import type { DiscordCommands } from "./commands.js";
import { apiCode, restError } from "./errors.js";
import { chunkNonce, formatChunks, planParts } from "./format.js";
import { DISCORD_MAX_CHARS } from "./types.js";

const UNKNOWN_CHANNEL = 10003;
const UNKNOWN_MESSAGE = 10008;
const THREAD_ALREADY_CREATED = 160004;

/** Model output may ping users it names, never @everyone/@here or roles; replies notify the asker. */
export const ALLOWED_MENTIONS = { parse: ["users"], replied_user: true } as const;

interface PendingEdit {
  channelId: string;
  text: string | undefined;
  lastAt: number;
  timer: NodeJS.Timeout | undefined;
  waiters: { resolve: () => void; reject: (err: unknown) => void }[];
}

export interface OutboundOptions {
  logger: Logger;
  editIntervalMs: number;
  typingIntervalMs: number;
  /** Whether replies in a channel quote the question (server channels and threads; not DMs). */
  quotes(channelId: string): boolean;
  /** Slash commands waiting for their answer (the first chunk of a reply to one becomes its reply). */
  interactions?: Pick<DiscordCommands, "owns" | "answer"> | undefined;
  /** The message components of a message's buttons (under its last part). */
  components?: ((buttons: NonNullable<OutboundMessage["buttons"]>) => object[]) | undefined;
}

/** Drops the oldest entries (insertion order) beyond `max`, only those `removable` allows. */
function trim<K, V>(map: Map<K, V>, max: number, removable: (value: V) => boolean = () => true): void {
  for (const [key, value] of map) {
    if (map.size <= max) return;
    if (removable(value)) map.delete(key);
  }
}

/** The outbound half of the adapter. */
export class DiscordOutbound {
  private readonly dmByUser = new Map<string, string>();
  private readonly plannedThreads = new Map<string, { parentId: string; name: string }>();
  private readonly lastTypingAt = new Map<string, number>();
  private readonly edits = new Map<string, PendingEdit>();
  /** Planned threads that could not be opened: their messages go to the parent channel. */
  private readonly threadFallback = new Set<string>();

  constructor(
    private readonly rest: REST,
    private readonly options: OutboundOptions,
  ) {}

  /** Remembers that a thread named `name` should be opened from message `messageId` on first use. */
  planThread(parentId: string, messageId: string, name: string): void {
    this.plannedThreads.set(messageId, { parentId, name });
    // Plans for messages the gateway never answered (not authorized, ignored) must not pile up.
    trim(this.plannedThreads, 1000);
  }

  /**
   * Sends a reply's parts. `previews` are messages already showing a streamed preview of this reply:
   * a text part `i` replaces `previews[i]` (PATCH) instead of being posted; a preview someone deleted is
   * replaced by a new message.
   */
  async send(
    chat: ChatRef,
    message: OutboundMessage,
    options: SendOptions = {},
    previews: readonly PreviewMessage[] = [],
  ): Promise<SendResult> {
    const parts = planParts(message.text, message.files);
    const messageIds: string[] = [];
    for (let i = options.fromChunk ?? 0; i < parts.length; i++) {
      const part = parts[i]!;
      const preview = part.files.length === 0 ? previews[i] : undefined;
      // Buttons go under the last part, also when it replaces a streamed preview.
      const components =
        i === parts.length - 1 && message.buttons?.length && this.options.components
          ? this.options.components(message.buttons)
          : undefined;
      if (
        preview &&
        ((!components && sameChunk(preview, part.content)) ||
          (await this.replacePreview(chat, preview.id, part.content, components)))
      ) {
        messageIds.push(preview.id);
        options.onChunkSent?.(i, preview.id);
        continue;
      }
      const body: Record<string, unknown> = {
        content: part.content,
        nonce: chunkNonce(message.idempotencyKey, i),
        enforce_nonce: true,
        allowed_mentions: ALLOWED_MENTIONS,
      };
      const files = await this.loadFiles(part.files);
      if (files.length > 0) {
        body["attachments"] = part.files.map((f, id) => ({
          id,
          filename: files[id]!.name,
          ...(f.caption ? { description: f.caption.slice(0, 1024) } : {}),
        }));
      }
      const withButtons = i === parts.length - 1 && message.buttons?.length && this.options.components;
      if (withButtons) body["components"] = this.options.components!(message.buttons!);
      const answersCommand =
        !withButtons && i === 0 && files.length === 0 && this.options.interactions?.owns(message.replyToId);
      const viaInteraction = answersCommand
        ? await this.answerInteraction(message.replyToId!, part.content)
        : undefined;
      const id =
        viaInteraction ??
        (await this.withChannel(chat, `sending a message to ${chat.chatId}`, async (channelId) => {
          if (
            i === 0 &&
            message.replyToId &&
            message.replyToId !== channelId &&
            this.options.quotes(channelId)
          ) {
            body["message_reference"] = { message_id: message.replyToId, fail_if_not_exists: false };
          }
          const sent = (await this.rest.post(Routes.channelMessages(channelId), {
            body,
            files,
            ...(options.signal ? { signal: options.signal } : {}),
          })) as { id: string };
          this.lastTypingAt.delete(channelId);
          return sent.id;
        }));
      messageIds.push(id);
      options.onChunkSent?.(i, id);
    }
    return { messageIds };
  }

  /**
   * Posts the first message of a streamed preview (quoting the question where replies do). A reply to a
   * slash command is answered through its interaction, so it is not previewed.
   */
  async postPreview(chat: ChatRef, content: string, replyToId: string): Promise<string> {
    if (this.options.interactions?.owns(replyToId)) {
      throw new PlatformError("discord", "a slash command's answer is not streamed");
    }
    return this.withChannel(chat, `posting a preview to ${chat.chatId}`, async (channelId) => {
      const body: Record<string, unknown> = { content, allowed_mentions: ALLOWED_MENTIONS };
      if (replyToId !== channelId && this.options.quotes(channelId)) {
        body["message_reference"] = { message_id: replyToId, fail_if_not_exists: false };
      }
      const sent = (await this.rest.post(Routes.channelMessages(channelId), { body })) as { id: string };
      this.lastTypingAt.delete(channelId);
      return sent.id;
    });
  }

  /** Replaces a preview message's content at once (no merging: the preview keeps its own cadence). */
  async editPreview(chat: ChatRef, messageId: string, content: string): Promise<void> {
    try {
      await this.rest.patch(Routes.channelMessage(this.knownChannel(chat), messageId), {
        body: { content, allowed_mentions: ALLOWED_MENTIONS },
      });
    } catch (err) {
      throw restError(err, `editing message ${messageId}`);
    }
  }

  /** Edits a preview to its final part; false when the preview is gone (then the part is posted). */
  private async replacePreview(
    chat: ChatRef,
    messageId: string,
    content: string,
    components?: object[],
  ): Promise<boolean> {
    try {
      await this.rest.patch(Routes.channelMessage(this.knownChannel(chat), messageId), {
        body: { content, allowed_mentions: ALLOWED_MENTIONS, ...(components ? { components } : {}) },
      });
      return true;
    } catch (err) {
      if (apiCode(err) === UNKNOWN_MESSAGE) return false;
      throw restError(err, `editing message ${messageId}`);
    }
  }

  /** The slash command's reply, or undefined (then the answer goes to the channel) when that failed. */
  private async answerInteraction(interactionId: string, content: string): Promise<string | undefined> {
    try {
      return await this.options.interactions!.answer(interactionId, content, ALLOWED_MENTIONS);
    } catch (err) {
      this.options.logger.warn(
        { interactionId, err: restError(err, "answering a slash command").message },
        "discord slash command reply failed; posting in the channel",
      );
      return undefined;
    }
  }

  /** Replaces a bot message's text; edits closer than `editIntervalMs` are merged (the last text wins). */
  edit(chat: ChatRef, messageId: string, text: string): Promise<void> {
    const chunks = formatChunks(text);
    let content = chunks[0] ?? "…";
    if (chunks.length > 1) content = `${content.slice(0, DISCORD_MAX_CHARS - 1)}…`;
    const pending = this.edits.get(messageId) ?? {
      channelId: this.knownChannel(chat),
      text: undefined,
      lastAt: 0,
      timer: undefined,
      waiters: [],
    };
    this.edits.set(messageId, pending);
    trim(this.edits, 500, (p) => p.timer === undefined);
    pending.text = content;
    return new Promise<void>((resolve, reject) => {
      pending.waiters.push({ resolve, reject });
      if (pending.timer) return;
      const wait = Math.max(0, pending.lastAt + this.options.editIntervalMs - Date.now());
      pending.timer = setTimeout(() => void this.flushEdit(messageId), wait);
    });
  }

  /** The prompt's new text, its buttons gone (`components: []`). */
  async settleButtons(chat: ChatRef, messageId: string, text: string): Promise<void> {
    const chunks = formatChunks(text);
    let content = chunks[0] ?? "…";
    if (chunks.length > 1) content = `${content.slice(0, DISCORD_MAX_CHARS - 1)}…`;
    try {
      await this.rest.patch(Routes.channelMessage(this.knownChannel(chat), messageId), {
        body: { content, components: [], allowed_mentions: ALLOWED_MENTIONS },
      });
    } catch (err) {
      throw restError(err, `settling prompt ${messageId}`);
    }
  }

  async deleteMessage(chat: ChatRef, messageId: string): Promise<void> {
    const pending = this.edits.get(messageId);
    if (pending) {
      if (pending.timer) clearTimeout(pending.timer);
      for (const w of pending.waiters) w.resolve();
      this.edits.delete(messageId);
    }
    const channelId = this.knownChannel(chat);
    try {
      await this.rest.delete(Routes.channelMessage(channelId, messageId));
    } catch (err) {
      if (apiCode(err) === UNKNOWN_MESSAGE) return;
      throw restError(err, `deleting message ${messageId}`);
    }
  }

  /** Shows "typing…" (lasts ~10 s); skipped when shown recently and nothing was posted since. */
  async sendTyping(chat: ChatRef): Promise<void> {
    try {
      await this.withChannel(chat, "typing", async (channelId) => {
        const last = this.lastTypingAt.get(channelId) ?? 0;
        if (Date.now() - last < this.options.typingIntervalMs) return;
        this.lastTypingAt.set(channelId, Date.now());
        await this.rest.post(Routes.channelTyping(channelId));
      });
    } catch (err) {
      this.options.logger.warn(
        { chat: chat.chatId, err: restError(err, "typing").message },
        "discord typing failed",
      );
    }
  }

  /** Cancels pending edits (their callers resolve). */
  stop(): void {
    for (const pending of this.edits.values()) {
      if (pending.timer) clearTimeout(pending.timer);
      for (const w of pending.waiters) w.resolve();
    }
    this.edits.clear();
  }

  private async flushEdit(messageId: string): Promise<void> {
    const pending = this.edits.get(messageId);
    if (!pending) return;
    const { text, waiters } = pending;
    pending.timer = undefined;
    pending.waiters = [];
    pending.lastAt = Date.now();
    try {
      await this.rest.patch(Routes.channelMessage(pending.channelId, messageId), {
        body: { content: text, allowed_mentions: ALLOWED_MENTIONS },
      });
      for (const w of waiters) w.resolve();
    } catch (err) {
      const mapped = restError(err, `editing message ${messageId}`);
      for (const w of waiters) w.reject(mapped);
    }
  }

  private async loadFiles(files: OutboundFile[]): Promise<RawFile[]> {
    return Promise.all(
      files.map(async (f) => ({
        name: f.fileName ?? basename(f.path),
        data: await readOutboundFile("discord", f.path),
        ...(f.mimeType ? { contentType: f.mimeType } : {}),
      })),
    );
  }

  /**
   * Runs `call` on the chat's channel: the thread (opening a planned auto-thread first), a known DM
   * channel, or the chat id. An unknown channel is retried once as a thread to open from its starter
   * message, or as a user id to reach by DM.
   */
  private async withChannel<T>(
    chat: ChatRef,
    what: string,
    call: (channelId: string) => Promise<T>,
  ): Promise<T> {
    try {
      return await call(await this.channelOf(chat));
    } catch (err) {
      if (apiCode(err) !== UNKNOWN_CHANNEL) throw restError(err, what);
    }
    try {
      if (chat.threadId) {
        await this.openThread(chat);
        return await call(chat.threadId);
      }
      const dm = (await this.rest.post(Routes.userChannels(), { body: { recipient_id: chat.chatId } })) as {
        id: string;
      };
      this.dmByUser.set(chat.chatId, dm.id);
      return await call(dm.id);
    } catch (err) {
      throw restError(err, what);
    }
  }

  /** The channel of a chat without side effects (edits, deletes of messages already posted). */
  private knownChannel(chat: ChatRef): string {
    if (chat.threadId && !this.threadFallback.has(chat.threadId)) return chat.threadId;
    return this.dmByUser.get(chat.chatId) ?? chat.chatId;
  }

  /** The channel to post in: the thread (opened first when planned), a known DM, or the chat id. */
  private async channelOf(chat: ChatRef): Promise<string> {
    if (!chat.threadId) return this.dmByUser.get(chat.chatId) ?? chat.chatId;
    if (this.threadFallback.has(chat.threadId)) return chat.chatId;
    if (this.plannedThreads.has(chat.threadId)) {
      try {
        await this.openThread(chat);
      } catch (err) {
        // No permission to open threads: answer in the channel rather than not at all.
        this.options.logger.warn(
          { chat: chat.chatId, err: restError(err, "opening a thread").message },
          "discord auto-thread failed; answering in the channel",
        );
        this.plannedThreads.delete(chat.threadId);
        this.threadFallback.add(chat.threadId);
        return chat.chatId;
      }
    }
    return chat.threadId;
  }

  private async openThread(chat: ChatRef): Promise<void> {
    const threadId = chat.threadId!;
    const plan = this.plannedThreads.get(threadId) ?? { parentId: chat.chatId, name: "Conversation" };
    try {
      await this.rest.post(Routes.threads(plan.parentId, threadId), {
        body: { name: plan.name, auto_archive_duration: 1440 },
      });
    } catch (err) {
      if (apiCode(err) !== THREAD_ALREADY_CREATED) throw err;
    }
    this.plannedThreads.delete(threadId);
  }
}
