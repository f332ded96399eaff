/**
 * Everything the bot says: replies split into chunks (each HTML, sent once more as plain text if Telegram
 * rejects the markup), files, the status message's edits and deletion, typing. Every call spends the
 * chat's budget; a 429 blocks only that chat and reaches the outbox as a retryable PlatformError with
 * `retryAfterMs`.
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { type Api, InputFile } from "grammy/web";
import { PlatformError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { ChatRef, OutboundFile, OutboundMessage, SendOptions, SendResult } from "../../core/types.js";
import { type PreviewMessage, sameChunk } from "../shared/reply-stream.js";
import { errorCode, isMarkupError, isNoop, retryAfterMs, toPlatformError } from "./api-errors.js";
import type { InlineKeyboard } from "./buttons.js";
import { formatChunks, TELEGRAM_MAX_CAPTION_CHARS, type TelegramChunk } from "./format.js";
import { outboundKind } from "./media.js";
import { isGroupChatId } from "./parse.js";
import { rateLimited, type SendBudget } from "./rate-limit.js";

/** grammY types signals with its own AbortSignal polyfill; the platform's is the same at run time. */
type GrammySignal = Parameters<Api["sendMessage"]>[3];
const asSignal = (signal: AbortSignal | undefined) => signal as GrammySignal;

/** Options every send of one reply shares (thread, quote, notification). */
interface Placement {
  message_thread_id?: number;
  reply_parameters?: { message_id: number; allow_sending_without_reply: true };
  disable_notification?: boolean;
  reply_markup?: InlineKeyboard;
}

/** Cuts `text` to `max` UTF-16 units without splitting a surrogate pair. */
function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}

/**
 * A file of the outbox as grammY uploads it: read as a stream (grammY's fetch build, which Herald
 * loads, takes no file paths).
 */
function fileInput(path: string, fileName: string): InputFile {
  return new InputFile(createReadStream(path), fileName);
}

export class TelegramSender {
  /** Status-message edits waiting for the chat's budget, by `chat:message`: only the latest text goes. */
  private readonly pendingEdits = new Map<string, { text: string; done: Promise<void> }>();
  private readonly deleted = new Set<string>();

  constructor(
    private readonly api: Api,
    private readonly budget: SendBudget,
    private readonly logger: Logger,
    /** The inline keyboard of a message's buttons (long data kept by id). */
    private readonly keyboard: (buttons: NonNullable<OutboundMessage["buttons"]>) => InlineKeyboard,
  ) {}

  /**
   * Sends a reply's chunks and files. `previews` are messages already showing a streamed preview of this
   * reply: chunk `i` replaces the text of `previews[i]` (an edit) instead of being posted; a preview the
   * user deleted is replaced by a new message.
   */
  async send(
    chat: ChatRef,
    message: OutboundMessage,
    options: SendOptions = {},
    previews: readonly PreviewMessage[] = [],
  ): Promise<SendResult> {
    const chunks = formatChunks(message.text);
    const files = message.files ?? [];
    const messageIds: string[] = [];
    // The buttons go under the last chunk of text: what they answer is read just above them.
    const keyboard =
      message.buttons?.length && chunks.length > 0 ? this.keyboard(message.buttons) : undefined;
    for (let index = options.fromChunk ?? 0; index < chunks.length + files.length; index++) {
      const place = this.placement(chat, message, index);
      if (keyboard && index === chunks.length - 1) place.reply_markup = keyboard;
      const chunk = chunks[index];
      const preview = chunk ? previews[index] : undefined;
      if (
        chunk &&
        preview &&
        ((!place.reply_markup && sameChunk(preview, chunk)) ||
          (await this.replacePreview(chat, preview.id, chunk, place.reply_markup)))
      ) {
        messageIds.push(preview.id);
        options.onChunkSent?.(index, preview.id);
        continue;
      }
      await this.budget.take(chat.chatId, "message", options.signal);
      const id = await this.call(chat, "sendMessage", () =>
        chunk
          ? this.sendChunk(chat, chunk, place, options.signal)
          : this.sendFile(chat, files[index - chunks.length]!, place, options.signal),
      );
      messageIds.push(id);
      options.onChunkSent?.(index, id);
    }
    return { messageIds };
  }

  /**
   * Edits a streamed preview to its final chunk (and keyboard). False when the preview is gone (deleted
   * by the user): the chunk is then posted as a new message.
   */
  private async replacePreview(
    chat: ChatRef,
    messageId: string,
    chunk: TelegramChunk,
    keyboard: InlineKeyboard | undefined,
  ): Promise<boolean> {
    await this.budget.take(chat.chatId, "other");
    try {
      await this.editChunk(chat, messageId, chunk, keyboard);
      return true;
    } catch (err) {
      if (err instanceof PlatformError && /message to edit not found/i.test(err.message)) return false;
      throw err;
    }
  }

  /** Posts the first message of a streamed preview (quoting the question in groups, like the reply). */
  async postPreview(chat: ChatRef, chunk: TelegramChunk, replyToId: string): Promise<string> {
    const place = this.placement(chat, { text: "", idempotencyKey: "", replyToId }, 0);
    await this.budget.take(chat.chatId, "message");
    return this.call(chat, "sendMessage", () => this.sendChunk(chat, chunk, place));
  }

  /** Replaces a preview message's text (a slot of the chat's budget was checked free by the caller). */
  async editPreview(chat: ChatRef, messageId: string, chunk: TelegramChunk): Promise<void> {
    await this.budget.take(chat.chatId, "other");
    await this.editChunk(chat, messageId, chunk, undefined);
  }

  /** One editMessageText as HTML, once more as plain text if Telegram rejects the markup. */
  private async editChunk(
    chat: ChatRef,
    messageId: string,
    chunk: TelegramChunk,
    keyboard: InlineKeyboard | undefined,
  ): Promise<void> {
    const markup = keyboard ? { reply_markup: keyboard } : {};
    const notModified = (err: unknown) => {
      if (!(isNoop(err) && /not modified/i.test((err as Error).message))) throw err;
    };
    await this.call(chat, "editMessageText", async () => {
      try {
        await this.api.editMessageText(chat.chatId, Number(messageId), chunk.html, {
          parse_mode: "HTML",
          ...markup,
        });
      } catch (err) {
        if (!isMarkupError(err)) {
          notModified(err);
          return "";
        }
        await this.api
          .editMessageText(chat.chatId, Number(messageId), chunk.plain, markup)
          .catch(notModified);
      }
      return "";
    });
  }

  /**
   * Marks a prompt's question as answered: `text` (with its `entities`, so formatting stays) and the
   * choice under it, and no keyboard any more. Failures are the caller's to log.
   */
  async settle(
    chat: ChatRef,
    messageId: number,
    text: string,
    entities: unknown[] | undefined,
  ): Promise<void> {
    await this.budget.take(chat.chatId, "other");
    await this.call(chat, "editMessageText", async () => {
      try {
        await this.api.editMessageText(
          chat.chatId,
          messageId,
          text,
          entities ? { entities: entities as never } : {},
        );
      } catch (err) {
        if (isNoop(err)) return "";
        if (errorCode(err) !== 400) throw err;
        // The text cannot take the choice (too long, say): at least the buttons go, so none is clicked twice.
        this.logger.warn(
          { chatId: chat.chatId, error: (err as Error).message },
          "telegram prompt text not edited",
        );
        await this.api.editMessageReplyMarkup(chat.chatId, messageId).catch((e: unknown) => {
          if (!isNoop(e)) throw e;
        });
      }
      return "";
    });
  }

  /** Replaces the status message's text. Edits waiting for the budget are merged (the latest text wins). */
  edit(chat: ChatRef, messageId: string, text: string): Promise<void> {
    const key = `${chat.chatId}:${messageId}`;
    const waiting = this.pendingEdits.get(key);
    if (waiting) {
      waiting.text = text;
      return waiting.done;
    }
    const entry = { text, done: Promise.resolve() };
    entry.done = (async () => {
      try {
        await this.budget.take(chat.chatId, "other");
      } finally {
        this.pendingEdits.delete(key);
      }
      if (this.deleted.has(key)) return;
      const chunk = formatChunks(entry.text)[0];
      if (!chunk) return;
      await this.call(chat, "editMessageText", async () => {
        try {
          await this.api.editMessageText(chat.chatId, Number(messageId), chunk.html, { parse_mode: "HTML" });
        } catch (err) {
          if (isNoop(err)) return "";
          if (!isMarkupError(err)) throw err;
          await this.api.editMessageText(chat.chatId, Number(messageId), chunk.plain).catch((e: unknown) => {
            if (!isNoop(e)) throw e;
          });
        }
        return "";
      });
    })();
    this.pendingEdits.set(key, entry);
    return entry.done;
  }

  async deleteMessage(chat: ChatRef, messageId: string): Promise<void> {
    const key = `${chat.chatId}:${messageId}`;
    this.deleted.add(key);
    if (this.deleted.size > 1000) this.deleted.delete(this.deleted.values().next().value!);
    await this.budget.take(chat.chatId, "other");
    await this.call(chat, "deleteMessage", async () => {
      await this.api.deleteMessage(chat.chatId, Number(messageId)).catch((err: unknown) => {
        if (!isNoop(err)) throw err;
      });
      return "";
    });
  }

  /**
   * Shows "typing…" for ~5 s. Skipped (not delayed) unless the chat's budget has a slot free now and
   * another left for the reply.
   */
  async sendTyping(chat: ChatRef): Promise<void> {
    if (!this.budget.tryTakeSpare(chat.chatId)) return;
    const thread = chat.threadId ? { message_thread_id: Number(chat.threadId) } : {};
    await this.call(chat, "sendChatAction", async () => {
      await this.api.sendChatAction(chat.chatId, "typing", thread);
      return "";
    });
  }

  /** Runs one Bot API call; a 429 blocks the chat, every failure becomes a PlatformError. */
  private async call(chat: ChatRef, what: string, run: () => Promise<string>): Promise<string> {
    try {
      return await run();
    } catch (err) {
      if (errorCode(err) === 429) {
        const waitMs = retryAfterMs(err) ?? 1000;
        this.budget.block(chat.chatId, waitMs);
        this.logger.warn(
          { chatId: chat.chatId, method: what, retryAfterMs: waitMs },
          "telegram rate limited this chat",
        );
        throw rateLimited(chat.chatId, waitMs, err);
      }
      throw toPlatformError(err, `${what} to chat ${chat.chatId}`);
    }
  }

  private placement(chat: ChatRef, message: OutboundMessage, index: number): Placement {
    const place: Placement = {};
    if (chat.threadId) place.message_thread_id = Number(chat.threadId);
    // In groups the reply's first message quotes the question, so it is clear whom it answers.
    const quote = index === 0 && message.replyToId && message.kind !== "notice" && isGroupChatId(chat.chatId);
    if (quote)
      place.reply_parameters = { message_id: Number(message.replyToId), allow_sending_without_reply: true };
    if (message.kind === "notice") place.disable_notification = true;
    return place;
  }

  /** Sends one chunk as HTML; if Telegram rejects the markup, the same text once more as plain text. */
  private async sendChunk(
    chat: ChatRef,
    chunk: TelegramChunk,
    place: Placement,
    signal?: AbortSignal,
  ): Promise<string> {
    try {
      const sent = await this.api.sendMessage(
        chat.chatId,
        chunk.html,
        { ...place, parse_mode: "HTML" },
        asSignal(signal),
      );
      return String(sent.message_id);
    } catch (err) {
      if (!isMarkupError(err)) throw err;
      this.logger.warn(
        { chatId: chat.chatId, error: (err as Error).message },
        "telegram rejected the markup, sending plain text",
      );
      const sent = await this.api.sendMessage(chat.chatId, chunk.plain, place, asSignal(signal));
      return String(sent.message_id);
    }
  }

  private async sendFile(
    chat: ChatRef,
    file: OutboundFile,
    place: Placement,
    signal?: AbortSignal,
  ): Promise<string> {
    const fileName = file.fileName ?? file.path.split("/").pop() ?? "file";
    if (!(await stat(file.path).catch(() => undefined))) {
      // Tell the user instead of failing the whole reply over a file that is gone.
      this.logger.error({ chatId: chat.chatId, fileName }, "telegram outbound file missing");
      const sent = await this.api.sendMessage(
        chat.chatId,
        `⚠️ ${fileName} could not be sent: the file no longer exists.`,
        place,
        asSignal(signal),
      );
      return String(sent.message_id);
    }
    const caption = file.caption ? { caption: truncate(file.caption, TELEGRAM_MAX_CAPTION_CHARS) } : {};
    if (file.voice) {
      // A spoken reply (Ogg/Opus) plays as a voice note; Telegram shows anything else as a file.
      const sent = await this.api.sendVoice(
        chat.chatId,
        fileInput(file.path, fileName),
        { ...place, ...caption },
        asSignal(signal),
      );
      return String(sent.message_id);
    }
    if ((await outboundKind(file)) === "photo") {
      try {
        const sent = await this.api.sendPhoto(
          chat.chatId,
          fileInput(file.path, fileName),
          { ...place, ...caption },
          asSignal(signal),
        );
        return String(sent.message_id);
      } catch (err) {
        // Telegram refuses some images as photos (dimensions, format): they still go as a document.
        if (errorCode(err) !== 400) throw err;
        this.logger.warn(
          { chatId: chat.chatId, fileName },
          "telegram refused the photo, sending as document",
        );
      }
    }
    const sent = await this.api.sendDocument(
      chat.chatId,
      fileInput(file.path, fileName),
      { ...place, ...caption },
      asSignal(signal),
    );
    return String(sent.message_id);
  }
}
