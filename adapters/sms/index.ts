/**
 * The SMS adapter: Twilio's Messages API through the `twilio` SDK, incoming messages by webhook at
 * `/webhooks/sms`. Each request's `X-Twilio-Signature` is checked with `twilio.validateRequest` over the
 * webhook's public URL (`TWILIO_WEBHOOK_URL`, as Twilio calls it) and the form fields; a bad one is
 * refused with 403 and logged. Every number is a DM chat of its own, so each has its own session.
 *
 * Carrier keywords come first and never reach the agent: STOP (and its synonyms) records the number as
 * opted out, after which nothing at all is sent to it (not even a reply already queued) and its messages
 * start no turn until it sends START; HELP is answered at once with a fixed text (TwiML). Replies are
 * plain text in messages of up to 1,600 characters (Twilio cuts them into segments the phone joins);
 * files go as MMS media on the last message, served from under the webhook URL. MMS media coming in is
 * downloaded with the account's credentials. Twilio has no idempotent send: a message Twilio accepted
 * but the outbox did not record is sent again after a crash.
 */
import twilio from "twilio";
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
import { AdapterLifecycle } from "../shared/lifecycle.js";
import { serveFile } from "../shared/served-files.js";
import { SmsApi, TWILIO_API_URL, twilioCode, UNSUBSCRIBED_CODE } from "./api.js";
import { smsChunks } from "./format.js";
import { saveMedia } from "./media.js";
import { keywordOf, MalformedWebhookError, mediaOf, parseInbound, readInbound } from "./parse.js";
import type { SmsAdapterConfig, SmsInbound } from "./types.js";

export type { SmsAdapterConfig } from "./types.js";

/** The HELP answer when none is configured. */
export const DEFAULT_HELP_TEXT =
  "This number is an AI assistant. Text your question to get an answer. Reply STOP to unsubscribe, START to subscribe again.";

const xml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** A TwiML answer: nothing, or one message back. */
function twiml(message?: string): Response {
  const body = message ? `<Message>${xml(message)}</Message>` : "";
  return new Response(`<?xml version="1.0" encoding="UTF-8"?><Response>${body}</Response>`, {
    headers: { "content-type": "text/xml" },
  });
}

/** SMS and MMS through Twilio. Build it with `createSmsAdapter`. */
export class SmsAdapter implements PlatformAdapter {
  readonly platform = "sms";
  private readonly api: SmsApi;
  private readonly log: Logger;
  private readonly life = new AdapterLifecycle();

  constructor(
    private readonly config: SmsAdapterConfig,
    private readonly deps: AdapterDeps,
  ) {
    this.api = new SmsApi(config.accountSid, config.authToken, config.apiUrl);
    this.log = deps.logger;
  }

  start(onMessage: InboundHandler): Promise<void> {
    return this.life.start(onMessage, () => this.open());
  }

  private async open(): Promise<void> {
    const account = await this.api.account(this.config.accountSid);
    this.log.info({ account: account.friendlyName, from: this.config.fromNumber }, "sms ready for webhooks");
    // A further account is served at its own path (`/webhooks/sms@shop`).
    const path = this.deps.webhookPath ?? "/webhooks/sms";
    const pathname = new URL(this.config.webhookUrl).pathname.replace(/%40/gi, "@").replace(/\/+$/, "");
    if (!pathname.endsWith(path)) {
      this.log.warn(
        { path },
        "the webhook URL does not end in the path where the gateway serves this number",
      );
    }
  }

  stop(): Promise<void> {
    return this.life.stop();
  }

  status(): AdapterStatus {
    return this.life.status();
  }

  /** `POST /webhooks/sms` (incoming messages) and `GET /webhooks/sms/media/<id>` (MMS media out). */
  handleWebhook(request: Request): Promise<Response> {
    return this.life.receive(request, (onMessage) => this.onWebhook(request, onMessage), this.deps.kv);
  }

  /** One signed delivery: a keyword answered, or the message handed on; TwiML once recorded. */
  private async onWebhook(request: Request, onMessage: InboundHandler): Promise<Response> {
    const params = Object.fromEntries(new URLSearchParams(await request.text()));
    const signature = request.headers.get("x-twilio-signature") ?? "";
    if (
      !signature ||
      !twilio.validateRequest(this.config.authToken, signature, this.config.webhookUrl, params)
    ) {
      this.log.warn({ signed: Boolean(signature) }, "sms webhook signature invalid; refused");
      return new Response("bad signature", { status: 403 });
    }
    let inbound: SmsInbound;
    try {
      inbound = readInbound(params);
      if (inbound.AccountSid !== this.config.accountSid)
        throw new MalformedWebhookError("AccountSid is not this account's");
    } catch (err) {
      if (!(err instanceof MalformedWebhookError)) throw err;
      this.log.warn({ error: err.message }, "sms webhook malformed; refused");
      return new Response("bad request", { status: 400 });
    }
    try {
      return await this.onInbound(inbound, onMessage);
    } catch (err) {
      this.log.warn({ error: describeError(err) }, "sms message not recorded");
      return new Response("not recorded", { status: 500 });
    }
  }

  /** Keywords first; then, for a number not opted out, the message with its media, handed on. */
  private async onInbound(inbound: SmsInbound, onMessage: InboundHandler): Promise<Response> {
    const keyword = keywordOf(inbound.Body);
    if (keyword === "stop") {
      this.deps.kv.set(`optout:${inbound.From}`, String(Date.now()));
      this.log.info({ messageSid: inbound.MessageSid }, "sms number opted out (STOP)");
      return twiml();
    }
    if (keyword === "start") {
      this.deps.kv.delete(`optout:${inbound.From}`);
      this.log.info({ messageSid: inbound.MessageSid }, "sms number opted in again (START)");
      return twiml();
    }
    if (keyword === "help") return twiml(this.config.helpText ?? DEFAULT_HELP_TEXT);
    if (this.optedOut(inbound.From)) {
      this.log.info({ messageSid: inbound.MessageSid }, "sms from an opted-out number; no turn until START");
      return twiml();
    }
    const message = parseInbound(inbound);
    const media = mediaOf(inbound);
    if (media.length && (this.deps.isAddressed?.(message) ?? true)) {
      const saved = await saveMedia(inbound.MessageSid, media, {
        cacheDir: this.deps.cacheDir,
        maxBytes: this.deps.mediaMaxBytes ?? DEFAULT_MEDIA_MAX_BYTES,
        logger: this.log,
        apiUrl: this.config.apiUrl ?? TWILIO_API_URL,
        auth: Buffer.from(`${this.config.accountSid}:${this.config.authToken}`).toString("base64"),
      });
      if (saved.files.length) message.attachments = saved.files;
      if (saved.notes.length) message.text = [message.text, ...saved.notes].filter(Boolean).join("\n");
    }
    await onMessage(message);
    return twiml();
  }

  private optedOut(number: string): boolean {
    return this.deps.kv.get(`optout:${number}`) !== undefined;
  }

  async send(chat: ChatRef, message: OutboundMessage, options: SendOptions = {}): Promise<SendResult> {
    if (this.optedOut(chat.chatId)) {
      throw new PlatformError(
        "sms",
        `${chat.chatId} opted out with STOP; nothing is sent until they text START.`,
      );
    }
    const chunks = smsChunks(message.text, this.config.maxChars);
    const mediaUrl = (message.files ?? [])
      .slice(0, 10)
      .map((file) => serveFile(file, this.config.webhookUrl, this.deps.kv));
    if (chunks.length === 0 && mediaUrl.length) chunks.push("");
    const ids: string[] = [];
    for (let i = options.fromChunk ?? 0; i < chunks.length; i++) {
      options.signal?.throwIfAborted();
      const last = i === chunks.length - 1;
      const sid = await this.api
        .send({
          to: chat.chatId,
          from: this.config.fromNumber,
          body: chunks[i]!,
          mediaUrl: last ? mediaUrl : undefined,
        })
        .catch((err: unknown) => {
          if (twilioCode(err) === UNSUBSCRIBED_CODE)
            this.deps.kv.set(`optout:${chat.chatId}`, String(Date.now()));
          throw err;
        });
      ids.push(sid);
      options.onChunkSent?.(i, sid);
    }
    return { messageIds: ids };
  }
}

/** Builds the SMS adapter (checks the credentials on `start`). */
export function createSmsAdapter(config: SmsAdapterConfig, deps: AdapterDeps): SmsAdapter {
  return new SmsAdapter(config, deps);
}
