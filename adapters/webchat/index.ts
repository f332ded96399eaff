/**
 * The web chat: a platform like the others, whose "platform" is the browser page at `/chat` on the
 * gateway's HTTP server. A message typed there is an `InboundMessage` of the user's own chat
 * (`webchat:<userId>`, a direct chat) through the same inbound steps, sessions, access and commands; its
 * reply comes back through the outbox to `send`, its text as it is written through `onTurnEvent`, and
 * both go to every open page of that chat as server-sent events (`channel.ts`), which a page that
 * reconnects resumes from its last event id. SSE rather than WebSocket: the stream only flows one
 * way (a message is a POST carrying the CSRF token), it resumes by itself with `Last-Event-ID`, and it
 * passes proxies as an ordinary response. Users log in as the owner or join by invite (`auth.ts`);
 * the pages and their API are `routes.ts`, the browser's code `client/`.
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import type { Logger } from "../../core/logger.js";
import {
  type AdapterDeps,
  type AdapterTurnEvent,
  type ChatRef,
  DEFAULT_MEDIA_MAX_BYTES,
  type InboundHandler,
  type InboundMessage,
  type KeyValueStore,
  type OutboundMessage,
  type PlatformAdapter,
  type SendResult,
} from "../../core/types.js";
import { WebAuth } from "./auth.js";
import { ChatChannel, EventClock } from "./channel.js";
import { type WebFiles, webFiles } from "./files.js";
import { webRoutes } from "./routes.js";
import type { WebChatServices, WebEventData, WebFile } from "./types.js";

export type * from "./types.js";

/** The web chat's own settings (from the `webchat:` section). */
export interface WebAdapterConfig {
  loginTtlMs: number;
  inviteTtlMs: number;
}

/** What a message typed on the page carries. */
export interface WebSubmission {
  userId: string;
  name: string;
  text: string;
  files?: WebFile[] | undefined;
  attachments?: InboundMessage["attachments"];
  viaButton?: boolean | undefined;
}

/** The web chat adapter: a PlatformAdapter with its own routes on the gateway's server. */
export class WebChatAdapter implements PlatformAdapter {
  readonly platform = "webchat";
  readonly sendsButtons = true;
  readonly clock = new EventClock();
  readonly auth: WebAuth;
  readonly files: WebFiles;
  readonly #channels = new Map<string, ChatChannel>();
  #onMessage: InboundHandler | undefined;
  readonly #routes: (req: IncomingMessage, res: ServerResponse, path: string) => Promise<boolean>;

  constructor(
    config: WebAdapterConfig,
    readonly deps: {
      logger: Logger;
      kv: KeyValueStore;
      cacheDir: string;
      mediaMaxBytes: number;
      services: WebChatServices;
      isAllowed?: ((userId: string) => boolean) | undefined;
    },
  ) {
    this.auth = new WebAuth({
      kv: deps.kv,
      secrets: deps.services.secrets,
      loopbackServer: deps.services.loopbackServer,
      loginTtlMs: config.loginTtlMs,
      inviteTtlMs: config.inviteTtlMs,
      isAllowed: deps.isAllowed,
    });
    this.files = webFiles({ kv: deps.kv, dir: join(deps.cacheDir, "web"), maxBytes: deps.mediaMaxBytes });
    this.#routes = webRoutes(this);
  }

  /** The live stream of user `userId`'s chat. */
  channel(userId: string): ChatChannel {
    let c = this.#channels.get(userId);
    if (!c) {
      c = new ChatChannel(this.clock);
      this.#channels.set(userId, c);
    }
    return c;
  }

  get running(): boolean {
    return this.#onMessage !== undefined;
  }

  async start(onMessage: InboundHandler): Promise<void> {
    this.#onMessage = onMessage;
  }

  async stop(): Promise<void> {
    this.#onMessage = undefined;
    for (const c of this.#channels.values()) c.close();
  }

  handleHttp(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
    return this.#routes(req, res, path);
  }

  /**
   * Hands a message typed on the page to the gateway, after every page of the chat has been shown it.
   * @throws when the gateway could not record it (the page says so and keeps the text)
   */
  async submit(s: WebSubmission): Promise<string> {
    if (!this.#onMessage) throw new Error("the web chat is not running");
    const messageId = `${Date.now().toString(36)}-${randomBytes(6).toString("hex")}`;
    const turnId = this.deps.services.turnIdOf(messageId);
    const channel = this.channel(s.userId);
    const chat = { platform: "webchat", chatId: s.userId };
    const before = this.deps.services.activeSession(chat);
    channel.emit("user", { turnId, replyToId: messageId, text: s.text, files: s.files });
    const outcome = await this.#onMessage({
      platform: "webchat",
      messageId,
      chat,
      chatType: "dm",
      sender: { id: s.userId, name: s.name },
      text: s.text,
      mentioned: true,
      replyToId: messageId,
      attachments: s.attachments,
      sentAt: Date.now(),
      streamReply: true,
      viaButton: s.viaButton,
    }).catch((err: unknown) => {
      channel.emit("ended", { turnId, status: "failed" });
      throw err;
    });
    // A command has no turn: the page stops waiting, and reads the sessions again (/new, /resume…).
    if (outcome !== "accepted") channel.emit("ended", { turnId, status: "ok" });
    if (outcome === "command")
      channel.emit("session", { changed: this.deps.services.activeSession(chat) !== before });
    return outcome;
  }

  async send(chat: ChatRef, message: OutboundMessage): Promise<SendResult> {
    const id = `m-${randomBytes(8).toString("hex")}`;
    const files = await Promise.all((message.files ?? []).map((f) => this.files.offer(chat.chatId, f)));
    const data: WebEventData["message"] = {
      id,
      kind: message.kind ?? "reply",
      text: message.text,
      ...(message.replyToId ? { turnId: this.deps.services.turnIdOf(message.replyToId) } : {}),
      ...(message.buttons?.length ? { buttons: message.buttons } : {}),
      ...(files.length ? { files } : {}),
    };
    this.channel(chat.chatId).emit("message", data);
    return { messageIds: [id] };
  }

  async settleButtons(chat: ChatRef, messageId: string, text: string): Promise<void> {
    this.channel(chat.chatId).emit("settle", { id: messageId, text });
  }

  onTurnEvent(chat: ChatRef, event: AdapterTurnEvent): void {
    const channel = this.channel(chat.chatId);
    const turnId = this.deps.services.turnIdOf(event.replyToId);
    if (event.type === "delta") channel.emit("delta", { turnId, text: event.text });
    else if (event.type === "tool") channel.emit("tool", { turnId, line: event.line, callId: event.callId });
    else if (event.type === "tool-end") {
      const { callId, ok, durationMs } = event;
      channel.emit("tool_end", { turnId, callId, ok, durationMs });
    } else channel.emit("ended", { turnId, status: event.status });
  }
}

/** Builds the web chat adapter. */
export function createWebAdapter(
  config: WebAdapterConfig,
  deps: AdapterDeps & { services: WebChatServices },
): WebChatAdapter {
  return new WebChatAdapter(config, {
    logger: deps.logger,
    kv: deps.kv,
    cacheDir: deps.cacheDir,
    mediaMaxBytes: deps.mediaMaxBytes ?? DEFAULT_MEDIA_MAX_BYTES,
    services: deps.services,
    isAllowed: deps.isAllowed,
  });
}
