/**
 * The Google Chat adapter for a Chat app on an HTTP endpoint: Chat POSTs interaction events to
 * `/webhooks/googlechat` (`handleWebhook`) with a bearer token Herald checks against Google's
 * certificates before it reads anything; replies go through the Chat REST API as the app (a service
 * account). DMs and spaces; in a space each thread is a session and replies go into it. Buttons are a
 * cards v2 card (a click is a CARD_CLICKED event: the clicker's message with the button's data, and
 * the answer to that request turns the card into its text and the choice). Streamed replies patch one
 * message in place; uploads come in through `media.download` (see `media.ts` for files out). A
 * malformed or unsigned request is logged and answered 400/401; the adapter runs on.
 */
import type { JWT } from "google-auth-library";
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
import { ChatApi, clientMessageId } from "./api.js";
import { accessToken, ChatTokenVerifier, chatCredentials, readServiceAccount } from "./auth.js";
import { buttonCards, googlechatChunks, toChatText } from "./format.js";
import { outboundNotes, saveFiles } from "./media.js";
import { clicked, MalformedEventError, parseEvent, readEvent } from "./parse.js";
import { googlechatStreams, threadOf } from "./stream.js";
import type { ChatEvent, GooglechatAdapterConfig } from "./types.js";

export type { GooglechatAdapterConfig } from "./types.js";

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

/** Google Chat as a Chat app. Build it with `createGooglechatAdapter`. */
export class GooglechatAdapter implements PlatformAdapter {
  readonly platform = "googlechat";
  readonly sendsButtons = true;
  private readonly log: Logger;
  private readonly streams: ReplyStreams<string>;
  private api: ChatApi | undefined;
  private verifier: ChatTokenVerifier | undefined;
  private readonly life = new AdapterLifecycle();

  constructor(
    private readonly config: GooglechatAdapterConfig,
    private readonly deps: AdapterDeps,
  ) {
    this.log = deps.logger;
    this.streams = googlechatStreams(() => this.api, deps.kv, this.log);
  }

  start(onMessage: InboundHandler): Promise<void> {
    return this.life.start(onMessage, () => this.open());
  }

  private async open(): Promise<void> {
    const key = await readServiceAccount(this.config.serviceAccount);
    const credentials: JWT = await chatCredentials(key);
    const verifier = await ChatTokenVerifier.create(this.config.certsUrl, this.config.audience);
    try {
      await accessToken(credentials);
    } catch (err) {
      if (err instanceof PlatformError && err.code === "platform_auth_failed") throw err;
      this.log.warn({ error: describeError(err) }, "googlechat sign-in failed; retried at the first send");
    }
    this.api = new ChatApi(this.config.apiUrl, credentials);
    this.verifier = verifier;
    this.log.info({ account: key.client_email }, "googlechat receiving at /webhooks/googlechat");
  }

  async stop(): Promise<void> {
    await this.life.stop();
    this.api = undefined;
    this.verifier = undefined;
    this.streams.stop();
  }

  status(): AdapterStatus {
    return this.life.status();
  }

  /** One POST from Chat: 401 unless signed, 400 when malformed, 200 once the gateway recorded it. */
  async handleWebhook(request: Request): Promise<Response> {
    const { verifier, api } = this;
    const onMessage = this.life.onMessage;
    if (!verifier || !onMessage || !api || request.method !== "POST")
      return new Response(null, { status: 503 });
    try {
      await verifier.verify(request.headers.get("authorization"));
    } catch (err) {
      this.log.warn({ error: describeError(err) }, "googlechat request refused: its token did not check out");
      return new Response(null, { status: 401 });
    }
    let event: ChatEvent;
    try {
      event = readEvent(JSON.parse(await request.text()));
    } catch (err) {
      const detail = err instanceof MalformedEventError ? err.message : "body is not JSON";
      this.log.warn({ error: detail }, "googlechat event malformed; skipped");
      return new Response(null, { status: 400 });
    }
    try {
      return await this.onEvent(event, api, onMessage);
    } catch (err) {
      this.log.error({ error: describeError(err) }, "googlechat event not recorded; Chat will send it again");
      return new Response(null, { status: 500 });
    }
  }

  private async onEvent(event: ChatEvent, api: ChatApi, onMessage: InboundHandler): Promise<Response> {
    const message = parseEvent(event);
    if (!message) return json({});
    const click = clicked(event);
    const attachments = event.message?.attachment ?? [];
    if (!click && attachments.length > 0 && (this.deps.isAddressed?.(message) ?? true)) {
      const saved = await saveFiles(api, event.message!.name, attachments, {
        cacheDir: this.deps.cacheDir,
        maxBytes: this.deps.mediaMaxBytes ?? DEFAULT_MEDIA_MAX_BYTES,
        logger: this.log,
      });
      if (saved.files.length) message.attachments = saved.files;
      if (saved.notes.length) message.text = [message.text, ...saved.notes].filter(Boolean).join("\n");
    }
    if (this.config.stream !== "off") message.streamReply = true;
    await onMessage(message);
    if (!click) return json({});
    // The answer to a click updates the clicked message: its text and the choice, no buttons.
    const text = `${event.message?.text ?? ""}\n\n✓ ${click.label}`.trim();
    return json({ actionResponse: { type: "UPDATE_MESSAGE" }, text, cardsV2: [] });
  }

  private live(): ChatApi {
    if (!this.api)
      throw new PlatformError("googlechat", "The Google Chat adapter is not running.", { retryable: true });
    return this.api;
  }

  /**
   * Sends a reply into the chat's thread; a streamed one replaces its preview (patched) instead of
   * posting again. Buttons go on the last message as a card; files are named in the text.
   */
  async send(chat: ChatRef, message: OutboundMessage, options: SendOptions = {}): Promise<SendResult> {
    const api = this.live();
    const chunks = googlechatChunks(
      [message.text, ...outboundNotes(message.files ?? [])].filter(Boolean).join("\n\n"),
    );
    if (chunks.length === 0) chunks.push("");
    const previews = message.kind === "notice" ? [] : await this.streams.claim(chat, message.replyToId);
    const last = chunks.length - 1;
    const ids: string[] = [];
    for (let i = options.fromChunk ?? 0; i < chunks.length; i++) {
      options.signal?.throwIfAborted();
      const text = chunks[i]!;
      const cardsV2 = i === last && message.buttons?.length ? buttonCards(message.buttons) : undefined;
      const preview = previews[i];
      let id: string;
      if (preview && !cardsV2 && sameChunk(preview, text)) id = preview.id;
      else if (preview) {
        await api.update(preview.id, { text, cardsV2 });
        id = preview.id;
      } else {
        const body = { text, ...threadOf(chat), ...(cardsV2 ? { cardsV2 } : {}) };
        id = await api.create(chat.chatId, body, clientMessageId(message.idempotencyKey, i), options.signal);
      }
      ids.push(id);
      options.onChunkSent?.(i, id);
    }
    if (previews.length > 0) await this.streams.settle(chat, message.replyToId, previews, chunks.length);
    return { messageIds: ids };
  }

  onTurnEvent(chat: ChatRef, event: AdapterTurnEvent): void {
    this.streams.onEvent(chat, event);
  }

  async edit(_chat: ChatRef, messageId: string, text: string): Promise<void> {
    const [first] = googlechatChunks(text);
    await this.live().update(messageId, { text: first ?? "" });
  }

  async settleButtons(_chat: ChatRef, messageId: string, text: string): Promise<void> {
    await this.live().update(messageId, { text: toChatText(text), cardsV2: [] });
  }

  async deleteMessage(_chat: ChatRef, messageId: string): Promise<void> {
    await this.live().delete(messageId);
  }
}

/** Builds the Google Chat adapter (loads google-auth-library on `start`). */
export function createGooglechatAdapter(
  config: GooglechatAdapterConfig,
  deps: AdapterDeps,
): GooglechatAdapter {
  return new GooglechatAdapter(config, deps);
}
