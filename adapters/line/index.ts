/**
 * The LINE adapter: the Messaging API through `@line/bot-sdk`, events by webhook at `/webhooks/line`.
 * Each request's `x-line-signature` (HMAC-SHA256 of the raw body with the channel secret) is checked
 * before anything is read; a bad one is refused with 401 and logged. Events are handed on one by one
 * and the request is answered 200 only once the gateway recorded them, so a failure (500) makes LINE
 * redeliver, and the inbound ledger drops the copies (message ids are stable).
 *
 * Replies: the first message of a reply goes through the reply API with the event's one-use token while
 * it is fresh (free, and it does not count against the push quota); later chunks, retries and messages
 * with no token left are pushed, each with an `X-Line-Retry-Key` derived from the outbox item, so a
 * retried push is not shown twice. Text is plain (LINE renders no Markdown) in messages of 5,000
 * characters; buttons are quick-reply postback items on the last message, and a tap comes back as a
 * message of the tapping user whose text is the button's data. Files in are downloaded from the content
 * API; files out are served from `LINE_PUBLIC_URL` (images as image messages, other files as a flex card
 * with a download button). Groups and rooms are answered when the bot is mentioned.
 */
import { type messagingApi, validateSignature } from "@line/bot-sdk";
import { describeError, PlatformError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type {
  AdapterDeps,
  AdapterStatus,
  ChatRef,
  InboundHandler,
  OutboundMessage,
  PlatformAdapter,
  SendOptions,
  SendResult,
} from "../../core/types.js";
import { DEFAULT_MEDIA_MAX_BYTES } from "../../core/types.js";
import { decodeButtonData, encodeButtonData } from "../shared/button-data.js";
import { AdapterLifecycle } from "../shared/lifecycle.js";
import { LineApi, type LineBot, lineError } from "./api.js";
import { lineChunks, quickReply } from "./format.js";
import { fileMessage, saveContent } from "./media.js";
import { CONTENT_TYPES, MalformedEventError, parseEvent, readEvent } from "./parse.js";
import { type LineAdapterConfig, webhookBodySchema } from "./types.js";

export type { LineAdapterConfig } from "./types.js";

/** Postback data LINE carries: 300 characters. */
const POSTBACK_BYTES = 300;
/** Reply tokens remembered as spent, per chat. */
const SPENT_KEPT = 20;

/** LINE over the Messaging API and webhooks. Build it with `createLineAdapter`. */
export class LineAdapter implements PlatformAdapter {
  readonly platform = "line";
  readonly sendsButtons = true;
  private readonly api: LineApi;
  private readonly log: Logger;
  private readonly life = new AdapterLifecycle();
  private bot: LineBot | undefined;

  constructor(
    private readonly config: LineAdapterConfig,
    private readonly deps: AdapterDeps,
  ) {
    this.api = new LineApi(
      config.channelAccessToken,
      config.apiUrl ?? "https://api.line.me",
      config.dataUrl ?? "https://api-data.line.me",
    );
    this.log = deps.logger;
  }

  start(onMessage: InboundHandler): Promise<void> {
    return this.life.start(onMessage, () => this.open());
  }

  private async open(): Promise<void> {
    this.bot = await this.api.botInfo();
    this.log.info({ botId: this.bot.userId, basicId: this.bot.basicId }, "line bot ready for webhooks");
  }

  stop(): Promise<void> {
    return this.life.stop();
  }

  status(): AdapterStatus {
    return this.life.status();
  }

  /** `POST /webhooks/line` (events) and `GET /webhooks/line/media/<id>` (files LINE fetches). */
  handleWebhook(request: Request): Promise<Response> {
    return this.life.receive(request, (onMessage) => this.onWebhook(request, onMessage), this.deps.kv);
  }

  /** One signed delivery: its events handed on one by one; 200 once all were recorded. */
  private async onWebhook(request: Request, onMessage: InboundHandler): Promise<Response> {
    const raw = await request.text();
    const signature = request.headers.get("x-line-signature");
    if (!signature || !validateSignature(raw, this.config.channelSecret, signature)) {
      this.log.warn({ signed: Boolean(signature) }, "line webhook signature invalid; refused");
      return new Response("bad signature", { status: 401 });
    }
    let events: unknown[];
    try {
      events = webhookBodySchema.parse(JSON.parse(raw)).events;
    } catch (err) {
      this.log.warn({ error: describeError(err) }, "line webhook body malformed; refused");
      return new Response("bad request", { status: 400 });
    }
    for (const event of events) {
      try {
        await this.onEvent(event, onMessage);
      } catch (err) {
        if (err instanceof MalformedEventError) {
          this.log.warn({ error: err.message }, "line event malformed; skipped");
          continue;
        }
        this.log.warn({ error: describeError(err) }, "line event not recorded; LINE will redeliver");
        return new Response("not recorded", { status: 500 });
      }
    }
    return new Response("ok");
  }

  /** One event: parsed, its button data resolved, its content saved when addressed, handed on. */
  private async onEvent(raw: unknown, onMessage: InboundHandler): Promise<void> {
    const event = readEvent(raw);
    const message = parseEvent(event);
    if (!message) return;
    if (message.viaButton) {
      const data = decodeButtonData(message.text, this.deps.kv);
      if (data === undefined)
        throw new MalformedEventError("postback data names a button this store no longer has");
      message.text = data;
    }
    const content = event.message;
    if (content && CONTENT_TYPES.has(content.type) && (this.deps.isAddressed?.(message) ?? true)) {
      const saved = await saveContent(this.api, content, {
        cacheDir: this.deps.cacheDir,
        maxBytes: this.deps.mediaMaxBytes ?? DEFAULT_MEDIA_MAX_BYTES,
        logger: this.log,
      });
      if (saved.file) message.attachments = [saved.file];
      if (saved.note) message.text = [message.text, saved.note].filter(Boolean).join("\n");
    }
    await onMessage(message);
  }

  /** The messages a reply becomes: text chunks (buttons on the last), then one per file. */
  private messagesOf(message: OutboundMessage): messagingApi.Message[] {
    const out: messagingApi.Message[] = lineChunks(message.text).map((text) => ({ type: "text", text }));
    if (message.buttons?.length) {
      if (out.length === 0) out.push({ type: "text", text: "…" });
      const encode = (data: string) => encodeButtonData(data, this.deps.kv, POSTBACK_BYTES);
      out[out.length - 1]!.quickReply = quickReply(message.buttons, encode);
    }
    for (const file of message.files ?? []) {
      out.push(
        fileMessage(file, {
          publicUrl: this.config.publicUrl,
          kv: this.deps.kv,
          webhookPath: this.deps.webhookPath,
        }),
      );
    }
    return out;
  }

  async send(chat: ChatRef, message: OutboundMessage, options: SendOptions = {}): Promise<SendResult> {
    const messages = this.messagesOf(message);
    const ids: string[] = [];
    for (let i = options.fromChunk ?? 0; i < messages.length; i++) {
      options.signal?.throwIfAborted();
      const id = await this.deliver(chat, message, messages[i]!, i);
      ids.push(id);
      options.onChunkSent?.(i, id);
    }
    return { messageIds: ids };
  }

  /** One message: with the reply token while it is unspent and fresh, else pushed. */
  private async deliver(
    chat: ChatRef,
    message: OutboundMessage,
    line: messagingApi.Message,
    index: number,
  ): Promise<string> {
    const token = this.freshToken(chat, message);
    if (token) {
      this.spend(chat, token);
      try {
        const [id] = await this.api.reply(token, [line]);
        return id ?? `${message.idempotencyKey}-${index}`;
      } catch (err) {
        const error = lineError(err, "the reply");
        if (error.code !== "platform_error" || error.retryable) throw error;
        this.log.debug({ error: error.message }, "line reply token refused; pushing instead");
      }
    }
    const [id] = await this.api.push(chat.chatId, [line], `${message.idempotencyKey}-${index}`);
    return id ?? `${message.idempotencyKey}-${index}`;
  }

  /** The reply token of the message this answers, if unspent and within the reply window. */
  private freshToken(chat: ChatRef, message: OutboundMessage): string | undefined {
    const token = message.inboundMeta?.["replyToken"];
    const at = Number(message.inboundMeta?.["eventAt"]);
    if (!token || !Number.isFinite(at)) return undefined;
    if (Date.now() - at > (this.config.replyWindowMs ?? 50_000)) return undefined;
    return this.spent(chat).includes(token) ? undefined : token;
  }

  private spent(chat: ChatRef): string[] {
    const raw = this.deps.kv.get(`reply-spent:${chat.chatId}`);
    return raw ? (JSON.parse(raw) as string[]) : [];
  }

  /** Marks a token spent before it is used: a token is never tried twice, even across a crash. */
  private spend(chat: ChatRef, token: string): void {
    const kept = [...this.spent(chat), token].slice(-SPENT_KEPT);
    this.deps.kv.set(`reply-spent:${chat.chatId}`, JSON.stringify(kept));
  }

  /** LINE's loading animation; only 1:1 chats (user ids) have one. */
  async sendTyping(chat: ChatRef): Promise<void> {
    if (!chat.chatId.startsWith("U")) return;
    try {
      await this.api.loading(chat.chatId, 20);
    } catch (err) {
      this.log.debug({ error: describeError(err) }, "line loading animation failed");
    }
  }
}

/** Builds the LINE adapter (checks the token on `start`). */
export function createLineAdapter(config: LineAdapterConfig, deps: AdapterDeps): LineAdapter {
  if (!config.channelSecret || !config.channelAccessToken) {
    throw new PlatformError("line", "LINE needs LINE_CHANNEL_SECRET and LINE_CHANNEL_ACCESS_TOKEN.");
  }
  return new LineAdapter(config, deps);
}
