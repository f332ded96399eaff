/**
 * The Feishu / Lark adapter. Events come by HTTP event subscription (`/webhooks/feishu`): each request
 * is signed and AES-encrypted with the Encrypt Key and carries the Verification Token (`webhook.ts`),
 * a refused one is answered 401/400 and logged, and the gateway hears nothing of it. `url_verification`
 * is answered with its challenge. HTTP was chosen over the SDK's long connection (WSClient) because its
 * protobuf frames cannot be faked faithfully, and a webhook survives restarts without a session.
 * Messages (`im.message.receive_v1`) from DMs and group @mentions are handed on (`parse.ts`) and
 * answered 200 only once recorded, so Feishu redelivers one that was not; the ledger drops the repeat.
 * Replies, progress and buttons are interactive cards (`format.ts`), patched in place while streaming;
 * a click (`card.action.trigger`) comes back as the clicker's message and the card loses its buttons.
 * The Open API goes through the SDK's `Client` (`api.ts`), which also keeps the tenant token fresh.
 */
import { describeError, PlatformError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type {
  AdapterDeps,
  AdapterStatus,
  AdapterTurnEvent,
  ChatRef,
  InboundHandler,
  OutboundMessage,
  PlatformAdapter,
  SendOptions,
  SendResult,
} from "../../core/types.js";
import { DEFAULT_MEDIA_MAX_BYTES } from "../../core/types.js";
import { AdapterLifecycle } from "../shared/lifecycle.js";
import { type ReplyStreams, sameChunk } from "../shared/reply-stream.js";
import { FeishuApi } from "./api.js";
import { card, feishuChunks } from "./format.js";
import { saveResources, uploadFile } from "./media.js";
import { deleteMessage, feishuStreams, patchCard, postMessage, sendUuid } from "./messages.js";
import { MalformedEventError, parseCardAction, parseMessageEvent } from "./parse.js";
import type { FeishuAdapterConfig, FeishuEnvelope } from "./types.js";
import { RefusedRequest, verifyFeishu } from "./webhook.js";

export type { FeishuAdapterConfig } from "./types.js";

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

/** Feishu / Lark over event subscription + the Open API. Build it with `createFeishuAdapter`. */
export class FeishuAdapter implements PlatformAdapter {
  readonly platform = "feishu";
  readonly sendsButtons = true;
  private readonly api: FeishuApi;
  private readonly log: Logger;
  private readonly streams: ReplyStreams<string>;
  private botOpenId: string | undefined;
  private readonly life = new AdapterLifecycle();

  constructor(
    private readonly config: FeishuAdapterConfig,
    private readonly deps: AdapterDeps,
  ) {
    this.api = new FeishuApi(config.appId, config.appSecret, config.apiUrl);
    this.log = deps.logger;
    this.streams = feishuStreams(this.api, deps.kv, this.log, (chat) => this.quotes(chat));
  }

  start(onMessage: InboundHandler): Promise<void> {
    return this.life.start(onMessage, () => this.open());
  }

  private async open(): Promise<void> {
    const info = await this.api
      .call("bot/v3/info", (c) =>
        c.request<{ code?: number; bot?: { open_id?: string; app_name?: string } }>({
          url: "/open-apis/bot/v3/info",
          method: "GET",
        }),
      )
      .catch((err: unknown) => {
        if (err instanceof PlatformError && err.code === "platform_auth_failed") throw err;
        throw new PlatformError(
          "feishu",
          `Feishu at ${this.config.apiUrl} did not answer bot/v3/info: ${describeError(err)}. Fix: check feishu.domain (feishu or lark) and the network.`,
          { cause: err },
        );
      });
    if (!info.bot?.open_id) {
      throw new PlatformError(
        "feishu",
        "Feishu answered bot/v3/info without a bot: enable the Bot capability of the app (Developer Console → Features → Bot).",
      );
    }
    this.botOpenId = info.bot.open_id;
    this.log.info({ bot: info.bot.app_name, openId: this.botOpenId }, "feishu signed in");
  }

  async stop(): Promise<void> {
    await this.life.stop();
    this.streams.stop();
  }

  status(): AdapterStatus {
    return this.life.status();
  }

  /** Serves `/webhooks/feishu`: verifies, then answers the challenge or dispatches the event. */
  async handleWebhook(request: Request): Promise<Response> {
    const body = await request.text();
    let envelope: FeishuEnvelope;
    try {
      envelope = verifyFeishu(request.headers, body, {
        encryptKey: this.config.encryptKey,
        verificationToken: this.config.verificationToken,
        maxSkewMs: this.config.maxSkewMs ?? 300_000,
        now: Date.now(),
      });
    } catch (err) {
      if (!(err instanceof RefusedRequest)) throw err;
      this.log.warn({ reason: err.message }, "feishu request refused");
      return json({ error: err.message }, err.status);
    }
    if (envelope.type === "url_verification") return json({ challenge: envelope.challenge ?? "" });
    const onMessage = this.life.onMessage;
    if (!onMessage || !this.botOpenId) return json({ error: "not started" }, 503);
    const type = envelope.header?.event_type ?? envelope.type;
    try {
      if (type === "im.message.receive_v1") await this.onMessageEvent(envelope.event, onMessage);
      else if (type === "card.action.trigger") await this.onCardAction(envelope, onMessage);
      else this.log.debug({ type }, "feishu event ignored");
    } catch (err) {
      if (!(err instanceof MalformedEventError)) {
        this.log.error(
          { type, error: describeError(err) },
          "feishu event not recorded; Feishu will redeliver it",
        );
        return json({ error: "not recorded" }, 500);
      }
      this.log.warn({ type, error: err.message }, "feishu event malformed; skipped");
    }
    return json({});
  }

  private async onMessageEvent(event: unknown, onMessage: InboundHandler): Promise<void> {
    const parsed = parseMessageEvent(event, this.botOpenId!);
    if (!parsed) return;
    const { message, resources } = parsed;
    this.deps.kv.set(`chattype:${message.chat.chatId}`, message.chatType);
    if (resources.length > 0 && (this.deps.isAddressed?.(message) ?? true)) {
      const saved = await saveResources(this.api, message.messageId, resources, {
        cacheDir: this.deps.cacheDir,
        maxBytes: this.deps.mediaMaxBytes ?? DEFAULT_MEDIA_MAX_BYTES,
        logger: this.log,
      });
      if (saved.files.length) message.attachments = saved.files;
      if (saved.notes.length) message.text = [message.text, ...saved.notes].filter(Boolean).join("\n");
    }
    if (this.config.stream !== "off") message.streamReply = true;
    await onMessage(message);
  }

  private async onCardAction(envelope: FeishuEnvelope, onMessage: InboundHandler): Promise<void> {
    const eventId = envelope.header?.event_id ?? `${Date.now()}`;
    const click = parseCardAction(envelope.event, eventId, this.deps.kv);
    if (!click) return;
    await onMessage(click.message);
    const shown = this.deps.kv.get(`card:${click.cardId}`);
    if (shown !== undefined) {
      await patchCard(this.api, click.cardId, card(`${shown}\n\n✓ ${click.label}`)).catch((err: unknown) =>
        this.log.warn({ error: describeError(err) }, "feishu card not settled"),
      );
    }
  }

  /** Replies in groups quote the message they answer. */
  private quotes(chat: ChatRef): boolean {
    return Boolean(chat.threadId) || this.deps.kv.get(`chattype:${chat.chatId}`) === "group";
  }

  /** Sends a reply as cards (replacing its streamed previews), then its files. */
  async send(chat: ChatRef, message: OutboundMessage, options: SendOptions = {}): Promise<SendResult> {
    const chunks = feishuChunks(message.text);
    // A message of files alone sends no empty card.
    if (chunks.length === 0 && !message.files?.length) chunks.push("");
    const previews = message.kind === "notice" ? [] : await this.streams.claim(chat, message.replyToId);
    const last = chunks.length - 1;
    const ids: string[] = [];
    for (let i = options.fromChunk ?? 0; i < chunks.length; i++) {
      options.signal?.throwIfAborted();
      const buttons = i === last ? (message.buttons ?? []) : [];
      const content = card(chunks[i]!, buttons, this.deps.kv);
      const preview = previews[i];
      let id: string;
      if (preview && buttons.length === 0) {
        if (!sameChunk(preview, chunks[i])) await patchCard(this.api, preview.id, content);
        id = preview.id;
      } else {
        id = await postMessage(this.api, chat, {
          msgType: "interactive",
          content,
          uuid: sendUuid(`${message.idempotencyKey}-${i}`),
          replyTo: i === 0 && message.replyToId && this.quotes(chat) ? message.replyToId : undefined,
        });
      }
      if (buttons.length > 0) this.deps.kv.set(`card:${id}`, chunks[i]!);
      ids.push(id);
      options.onChunkSent?.(i, id);
    }
    if (previews.length > 0) await this.streams.settle(chat, message.replyToId, previews, chunks.length);
    // A file sent again by a retry is dropped by Feishu: its uuid is the same.
    for (const [n, file] of (message.files ?? []).entries()) {
      const upload = await uploadFile(this.api, file);
      const id = await postMessage(this.api, chat, {
        ...upload,
        uuid: sendUuid(`${message.idempotencyKey}-f${n}`),
      });
      if (chunks.length === 0) ids.push(id);
    }
    return { messageIds: ids };
  }

  /** Streams a reply into the chat as it is written (`stream: edit`). Never throws. */
  onTurnEvent(chat: ChatRef, event: AdapterTurnEvent): void {
    this.streams.onEvent(chat, event);
  }

  async edit(_chat: ChatRef, messageId: string, text: string): Promise<void> {
    await patchCard(this.api, messageId, card(feishuChunks(text)[0] ?? ""));
  }

  async settleButtons(_chat: ChatRef, messageId: string, text: string): Promise<void> {
    this.deps.kv.delete(`card:${messageId}`);
    await patchCard(this.api, messageId, card(feishuChunks(text)[0] ?? ""));
  }

  async deleteMessage(_chat: ChatRef, messageId: string): Promise<void> {
    await deleteMessage(this.api, messageId);
  }
}

/** Builds the Feishu / Lark adapter (checks the app on `start`). */
export function createFeishuAdapter(config: FeishuAdapterConfig, deps: AdapterDeps): FeishuAdapter {
  return new FeishuAdapter(config, deps);
}
