/**
 * The iMessage adapter, through a BlueBubbles server running on a Mac: its REST API (plain fetch,
 * `?password=` auth) to send, and its webhooks (`POST /webhooks/bluebubbles?password=…`) to receive.
 * BlueBubbles signs nothing, so a webhook must carry the server password in its query; one without it
 * is refused (401) and logged. Only `new-message` events are read; `updated-message` (read receipts,
 * edits), tapbacks and Herald's own messages are acknowledged and skipped.
 *
 * DMs (`iMessage;-;+1555…`) and group chats (`iMessage;+;chat…`, answered when Herald's name is used)
 * are chats of their own. Text is plain, split into bubbles of 4,000 characters; files go both ways
 * (attachments downloaded from the server; sent as attachment messages). Typing shows while a turn runs
 * when the server has the Private API. BlueBubbles does not redeliver webhooks, so the time of the last
 * message handed on is kept, and at start and every minute the messages since then are fetched
 * (`/message/query`) and handed on (the inbound ledger drops those already seen): a restart or a lost
 * webhook loses nothing.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { describeError } from "../../core/errors.js";
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
import { BlueBubblesApi } from "./api.js";
import { blueBubblesChunks } from "./format.js";
import { saveAttachments, sendAttachment } from "./media.js";
import { MalformedEventError, parseMessage, readMessage } from "./parse.js";
import { type BlueBubblesAdapterConfig, webhookSchema } from "./types.js";

export type { BlueBubblesAdapterConfig } from "./types.js";

/** Messages fetched per catch-up query. */
const CATCH_UP_LIMIT = 100;

/** iMessage over a BlueBubbles server. Build it with `createBlueBubblesAdapter`. */
export class BlueBubblesAdapter implements PlatformAdapter {
  readonly platform = "bluebubbles";
  private readonly api: BlueBubblesApi;
  private readonly log: Logger;
  private readonly names: string[];
  private readonly life = new AdapterLifecycle();
  private timer: NodeJS.Timeout | undefined;
  private catchingUp: Promise<void> | undefined;

  constructor(
    private readonly config: BlueBubblesAdapterConfig,
    private readonly deps: AdapterDeps,
  ) {
    this.api = new BlueBubblesApi(config.url, config.password);
    this.log = deps.logger;
    this.names = config.names?.length ? config.names : ["herald"];
  }

  start(onMessage: InboundHandler): Promise<void> {
    return this.life.start(onMessage, (handler) => this.open(handler));
  }

  private async open(onMessage: InboundHandler): Promise<void> {
    const info = await this.api.call<{ server_version?: string; private_api?: boolean }>("server/info");
    this.log.info(
      { serverVersion: info?.server_version, privateApi: info?.private_api },
      "bluebubbles server ready",
    );
    // In the background: the webhook is live meanwhile, and the ledger drops what both deliver.
    void this.catchUp(onMessage);
    this.timer = setInterval(() => void this.catchUp(onMessage), this.config.catchUpIntervalMs ?? 60_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    await this.life.stop();
    clearInterval(this.timer);
    this.timer = undefined;
    await this.catchingUp;
  }

  status(): AdapterStatus {
    return this.life.status();
  }

  /** Messages since the last one handed on, oldest first; one pass at a time. Never throws. */
  private catchUp(onMessage: InboundHandler): Promise<void> {
    this.catchingUp ??= this.fetchMissed(onMessage).finally(() => {
      this.catchingUp = undefined;
    });
    return this.catchingUp;
  }

  private async fetchMissed(onMessage: InboundHandler): Promise<void> {
    const since = Number(this.deps.kv.get("seen-at"));
    if (!Number.isFinite(since) || since <= 0) return;
    try {
      const missed = await this.api.call<unknown[]>("message/query", {
        json: { after: since, sort: "ASC", limit: CATCH_UP_LIMIT, with: ["chat", "handle", "attachment"] },
      });
      for (const raw of missed ?? []) await this.onRaw(raw, onMessage);
      if (missed?.length) this.log.info({ count: missed.length }, "bluebubbles caught up on missed messages");
    } catch (err) {
      this.log.warn({ error: describeError(err) }, "bluebubbles catch-up failed");
    }
  }

  /** Whether the webhook request carries the server password. */
  private authorised(request: Request): boolean {
    const given = new URL(request.url).searchParams.get("password") ?? "";
    const digest = (s: string) => createHash("sha256").update(s).digest();
    return timingSafeEqual(digest(given), digest(this.config.password));
  }

  /** `POST /webhooks/bluebubbles?password=…`: one server event. */
  async handleWebhook(request: Request): Promise<Response> {
    if (request.method !== "POST") return new Response("method not allowed", { status: 405 });
    if (!this.authorised(request)) {
      this.log.warn({}, "bluebubbles webhook without the server password; refused");
      return new Response("unauthorized", { status: 401 });
    }
    const onMessage = this.life.onMessage;
    if (!onMessage) return new Response("not running", { status: 503 });
    const body = webhookSchema.safeParse(await request.json().catch(() => undefined));
    if (!body.success) {
      this.log.warn({ error: body.error.issues[0]?.message }, "bluebubbles webhook body malformed; refused");
      return new Response("bad request", { status: 400 });
    }
    if (body.data.type !== "new-message") return new Response("ok");
    try {
      await this.onRaw(body.data.data, onMessage);
    } catch (err) {
      if (err instanceof MalformedEventError) {
        this.log.warn({ error: err.message }, "bluebubbles message malformed; skipped");
        return new Response("bad request", { status: 400 });
      }
      this.log.warn({ error: describeError(err) }, "bluebubbles message not recorded");
      return new Response("not recorded", { status: 500 });
    }
    return new Response("ok");
  }

  /** One message: parsed, its attachments saved when addressed, handed on, its time kept. */
  private async onRaw(raw: unknown, onMessage: InboundHandler): Promise<void> {
    const message = readMessage(raw);
    const inbound = parseMessage(message, this.names);
    if (inbound) {
      if (message.attachments.length && (this.deps.isAddressed?.(inbound) ?? true)) {
        const saved = await saveAttachments(this.api, message.attachments, {
          cacheDir: this.deps.cacheDir,
          maxBytes: this.deps.mediaMaxBytes ?? DEFAULT_MEDIA_MAX_BYTES,
          logger: this.log,
        });
        if (saved.files.length) inbound.attachments = saved.files;
        if (saved.notes.length) inbound.text = [inbound.text, ...saved.notes].filter(Boolean).join("\n");
      }
      await onMessage(inbound);
    }
    // Only once the gateway recorded it: a message whose recording failed is fetched again at start.
    if (message.dateCreated > Number(this.deps.kv.get("seen-at") ?? 0)) {
      this.deps.kv.set("seen-at", String(message.dateCreated));
    }
  }

  private get method(): string {
    return this.config.privateApi ? "private-api" : "apple-script";
  }

  async send(chat: ChatRef, message: OutboundMessage, options: SendOptions = {}): Promise<SendResult> {
    const chunks = blueBubblesChunks(message.text);
    const files = message.files ?? [];
    const ids: string[] = [];
    for (let i = options.fromChunk ?? 0; i < chunks.length + files.length; i++) {
      options.signal?.throwIfAborted();
      const tempGuid = `herald-${createHash("sha256").update(`${message.idempotencyKey}-${i}`).digest("hex").slice(0, 32)}`;
      let guid: string;
      if (i < chunks.length) {
        const sent = await this.api.call<{ guid?: string }>("message/text", {
          json: { chatGuid: chat.chatId, tempGuid, message: chunks[i], method: this.method },
          signal: options.signal,
        });
        guid = sent?.guid ?? tempGuid;
      } else {
        const file = files[i - chunks.length]!;
        guid = await sendAttachment(this.api, {
          chatGuid: chat.chatId,
          file,
          tempGuid,
          method: this.method,
          signal: options.signal,
        });
      }
      ids.push(guid);
      options.onChunkSent?.(i, guid);
    }
    return { messageIds: ids };
  }

  /** The typing bubble (Private API only; without it, nothing shows). */
  async sendTyping(chat: ChatRef): Promise<void> {
    if (!this.config.privateApi) return;
    try {
      await this.api.call(`chat/${encodeURIComponent(chat.chatId)}/typing`, { method: "POST" });
    } catch (err) {
      this.log.debug({ error: describeError(err) }, "bluebubbles typing failed");
    }
  }
}

/** Builds the BlueBubbles adapter (checks the server on `start`). */
export function createBlueBubblesAdapter(
  config: BlueBubblesAdapterConfig,
  deps: AdapterDeps,
): BlueBubblesAdapter {
  return new BlueBubblesAdapter(config, deps);
}
