/**
 * The WhatsApp adapter on Baileys: Herald runs as a linked device of a WhatsApp account. Linking shows a
 * QR code (or `herald whatsapp link --phone` a pairing code); credentials and Signal keys live in
 * `HERALD_HOME/whatsapp/`, so a restart stays linked. `chat = { platform: "whatsapp", chatId: <remote
 * JID> }`; `sender.id` is the sender's phone number.
 *
 * Inbound messages are handled one at a time, in order: parsed, media downloaded, recorded by the
 * gateway (which drops duplicates), then marked read. History sync (`messages.upsert` of type `append`)
 * never reaches the gateway. No tool-progress edits: on WhatsApp a deleted status message leaves a
 * visible "message deleted" tombstone, so the user sees "composing…" instead.
 */
import { join } from "node:path";
import { isJidGroup, isLidUser, isPnUser, jidNormalizedUser, type proto } from "@whiskeysockets/baileys";
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
import { type FileAuthState, openFileAuthState } from "./auth-state.js";
import { WhatsAppConnection } from "./connection.js";
import { formatChunks } from "./format.js";
import { downloadMedia, fileContent } from "./media.js";
import { type Me, parseMessage } from "./parse.js";
import type { WhatsAppSection } from "./section.js";
import {
  baileysLogger,
  createBaileysSocket,
  messageIdFor,
  printQr,
  RecentMap,
  sendError,
  toJid,
} from "./socket.js";

import type { WAMessage, WhatsAppAdapterConfig, WhatsAppAdapterOptions, WhatsAppSocket } from "./types.js";

export { type LinkOptions, type LinkResult, linkWhatsApp, normalisePhone, unlinkWhatsApp } from "./link.js";
export { printQr } from "./socket.js";
export type {
  WhatsAppAdapterConfig,
  WhatsAppAdapterOptions,
  WhatsAppSocket,
  WhatsAppSocketFactory,
} from "./types.js";

/** Outcomes after which the message is marked read (the gateway took it up). */
const READ_OUTCOMES = new Set(["accepted", "command", "pairing"]);

/** WhatsApp as a linked device, on Baileys. Build it with `createWhatsAppAdapter`. */
export class WhatsAppAdapter implements PlatformAdapter {
  readonly platform = "whatsapp";
  private readonly log: Logger;
  private auth: FileAuthState | undefined;
  private connection: WhatsAppConnection | undefined;
  private onMessage: InboundHandler | undefined;
  private inboundChain: Promise<void> = Promise.resolve();
  /** Contents of messages this adapter sent: never answered, and served to Baileys' retry receipts. */
  private readonly sent = new RecentMap<string, proto.IMessage | undefined>(1000);
  /** Recent inbound messages, to quote them in replies. */
  private readonly received = new RecentMap<string, WAMessage>(500);
  private readonly lastTyping = new Map<string, number>();

  constructor(
    private readonly config: WhatsAppAdapterConfig,
    private readonly deps: AdapterDeps,
    private readonly options: WhatsAppAdapterOptions = {},
  ) {
    this.log = deps.logger.child({ platform: "whatsapp" });
  }

  /**
   * Opens the saved credentials and connects. Resolves once connected, once a QR code is shown (not
   * linked yet), or after a transient failure (it keeps retrying).
   * @throws PlatformError when WhatsApp ended the session for good (logged out, replaced, banned).
   */
  async start(onMessage: InboundHandler): Promise<void> {
    if (this.onMessage) return;
    this.onMessage = onMessage;
    const auth = await openFileAuthState(this.config.authDir);
    if (this.onMessage !== onMessage) return; // stopped while opening
    this.auth = auth;
    if (!auth.state.creds.me?.id) {
      this.log.warn(
        {},
        "whatsapp is not linked yet: scan the QR code shown in the terminal, or run `herald whatsapp link --phone <number>` for a pairing code",
      );
    }
    const onQr = this.options.onQr ?? printQr;
    const connection = new WhatsAppConnection({
      auth,
      factory: this.options.socketFactory ?? createBaileysSocket,
      logger: this.log,
      socketLogger: baileysLogger(this.log),
      getMessage: async (key) => (key.id ? (this.sent.get(key.id) ?? undefined) : undefined),
      backoff: this.options.backoff,
      random: this.options.random,
      timers: this.options.timers,
      onQr: (qr) => onQr(qr),
      onSocket: (socket) => this.listen(socket),
    });
    this.connection = connection;
    try {
      await connection.start();
    } catch (err) {
      this.connection = undefined;
      this.onMessage = undefined;
      throw err;
    }
  }

  async stop(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    this.onMessage = undefined;
    connection?.stop();
    // Let the message in progress finish recording (bounded: a slow media download is abandoned).
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.inboundChain, new Promise((r) => (timer = setTimeout(r, 5000)))]);
    clearTimeout(timer);
    await this.auth?.flush();
  }

  status(): AdapterStatus {
    const status = this.connection?.status;
    if (!status) return { state: "stopped" };
    switch (status.phase) {
      case "open":
        return { state: "running" };
      case "reconnecting":
        return { state: "reconnecting", detail: status.detail };
      case "failed":
        return { state: "failed", detail: status.detail };
      case "stopped":
        return { state: "stopped" };
      default:
        return { state: "starting", detail: status.detail };
    }
  }

  /**
   * Sends the reply as WhatsApp-formatted text chunks, then its files. In groups the first chunk quotes
   * the message being answered. Each chunk carries a message id derived from the outbox item, so a retry
   * of an unconfirmed chunk is shown once.
   */
  async send(chat: ChatRef, message: OutboundMessage, options: SendOptions = {}): Promise<SendResult> {
    const socket = await this.openSocket(options.signal);
    const jid = toJid(chat.chatId);
    const parts = [
      ...formatChunks(message.text).map((text) => ({ text, linkPreview: null })),
      ...(message.files ?? []).map(fileContent),
    ];
    const quoted = isJidGroup(jid) && message.replyToId ? this.quoted(jid, message) : undefined;
    const messageIds: string[] = [];
    for (let i = options.fromChunk ?? 0; i < parts.length; i++) {
      options.signal?.throwIfAborted();
      const id = messageIdFor(message.idempotencyKey, i);
      // Recorded before sending: the echo of our own message must never count as the owner's.
      this.sent.set(id, undefined);
      try {
        const result = await socket.sendMessage(jid, parts[i]!, {
          messageId: id,
          ...(i === 0 && quoted ? { quoted } : {}),
        });
        this.sent.set(id, result?.message ?? undefined);
      } catch (err) {
        throw sendError(err, jid);
      }
      messageIds.push(id);
      options.onChunkSent?.(i, id);
    }
    return { messageIds };
  }

  /** "composing…" in the chat, at most once per `typingIntervalMs`. Best-effort. */
  async sendTyping(chat: ChatRef): Promise<void> {
    const socket = this.connection?.openSocket;
    if (!socket) return;
    const jid = toJid(chat.chatId);
    const now = Date.now();
    if (now - (this.lastTyping.get(jid) ?? 0) < (this.options.typingIntervalMs ?? 2000)) return;
    this.lastTyping.set(jid, now);
    await socket.sendPresenceUpdate("composing", jid);
  }

  /**
   * The open socket, waiting up to `sendWaitMs` while (re)connecting (right after start the outbox may
   * deliver before the connection is up). Retryable unless the connection ended for good.
   */
  private async openSocket(signal: AbortSignal | undefined): Promise<WhatsAppSocket> {
    const deadline = Date.now() + (this.options.sendWaitMs ?? 5000);
    for (;;) {
      const socket = this.connection?.openSocket;
      if (socket) return socket;
      const status = this.connection?.status;
      if (status?.phase === "failed") {
        throw new PlatformError("whatsapp", `WhatsApp is not connected: ${status.detail}`);
      }
      if (Date.now() >= deadline) {
        throw new PlatformError(
          "whatsapp",
          "WhatsApp is not connected (reconnecting); the message waits in the outbox.",
          {
            retryable: true,
            retryAfterMs: 5000,
          },
        );
      }
      signal?.throwIfAborted();
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** The message to quote: the original if still in memory, else rebuilt from the inbound meta. */
  private quoted(jid: string, message: OutboundMessage): WAMessage {
    const id = message.replyToId!;
    const original = this.received.get(id);
    if (original) return original;
    const meta = message.inboundMeta ?? {};
    return {
      key: { remoteJid: meta["jid"] ?? jid, id, fromMe: false, participant: meta["participant"] },
      message: { conversation: meta["quote"] ?? "" },
    };
  }

  /** Registers this adapter's handlers on a new socket (each reconnect builds one). */
  private listen(socket: WhatsAppSocket): void {
    socket.ev.on("connection.update", ({ connection }) => {
      if (connection !== "open") return;
      // Stay "unavailable": while a linked device is online, the owner's phone gets no notifications
      // (markOnlineOnConnect: false alone does not guarantee it). "composing" still shows per chat.
      socket.sendPresenceUpdate("unavailable").catch((err: unknown) => {
        this.log.debug({ err: describeError(err) }, "whatsapp presence update failed");
      });
    });
    socket.ev.on("messages.upsert", ({ messages, type }) => {
      if (type !== "notify") {
        this.log.debug({ type, count: messages.length }, "whatsapp history sync ignored");
        return;
      }
      for (const msg of messages) {
        this.inboundChain = this.inboundChain.then(() => this.handle(socket, msg));
      }
    });
  }

  private me(socket: WhatsAppSocket): Me {
    const user = socket.user ?? this.auth?.state.creds.me;
    const ids = [user?.id, user?.lid, user?.phoneNumber].filter((j): j is string => Boolean(j));
    const norm = ids.map((j) => jidNormalizedUser(j));
    return { pn: norm.find((j) => isPnUser(j)), lid: norm.find((j) => isLidUser(j)) };
  }

  /** One inbound message: parse, fetch media, record with the gateway, mark read. Never throws. */
  private async handle(socket: WhatsAppSocket, msg: WAMessage): Promise<void> {
    const onMessage = this.onMessage;
    if (!onMessage) return;
    try {
      const lidMapping = socket.signalRepository?.lidMapping;
      const parsed = await parseMessage(msg, {
        me: this.me(socket),
        selfChat: this.config.selfChat,
        sentIds: this.sent,
        pnForLid: lidMapping ? (lid) => lidMapping.getPNForLID(lid) : undefined,
      });
      if (parsed.kind === "skip") {
        const level = parsed.reason === "malformed" ? "warn" : "debug";
        this.log[level](
          { reason: parsed.reason, contentType: parsed.contentType },
          "whatsapp message skipped",
        );
        return;
      }
      const { inbound } = parsed;
      // Unaddressed group chatter is dropped by the gateway: don't fetch its photos and videos.
      const addressed = this.deps.isAddressed?.(inbound) ?? true;
      if (parsed.media && addressed) {
        const got = await downloadMedia(msg, parsed.media, {
          cacheDir: this.deps.cacheDir,
          maxBytes: this.config.maxMediaBytes,
          logger: this.log,
          reuploadRequest: socket.updateMediaMessage,
        });
        if (typeof got === "string") inbound.text = [inbound.text, got].filter(Boolean).join("\n");
        else inbound.attachments = [got];
      }
      this.received.set(inbound.messageId, msg);
      const outcome = await onMessage(inbound);
      this.log.debug({ messageId: inbound.messageId, outcome }, "whatsapp message recorded");
      if (READ_OUTCOMES.has(outcome) && this.connection?.openSocket === socket) {
        await socket.readMessages([parsed.key]).catch((err: unknown) => {
          this.log.debug({ err: describeError(err) }, "whatsapp read receipt failed");
        });
      }
    } catch (err) {
      this.log.error({ messageId: msg?.key?.id, err: describeError(err) }, "whatsapp message not recorded");
    }
  }
}

/** The adapter config from the `whatsapp:` section, the media size cap and `HERALD_HOME`. */
export function whatsAppAdapterConfig(
  section: WhatsAppSection,
  deps: Pick<AdapterDeps, "homeDir" | "mediaMaxBytes">,
): WhatsAppAdapterConfig {
  return {
    selfChat: section.selfChat,
    maxMediaBytes: deps.mediaMaxBytes ?? DEFAULT_MEDIA_MAX_BYTES,
    authDir: join(deps.homeDir, "whatsapp"),
  };
}

/**
 * Builds the WhatsApp adapter. The platform module passes only the section and `deps` (the real
 * `makeWASocket`); tests pass `{ socketFactory }` with a fake socket.
 */
export function createWhatsAppAdapter(
  section: WhatsAppSection,
  deps: AdapterDeps,
  options: WhatsAppAdapterOptions = {},
): WhatsAppAdapter {
  return new WhatsAppAdapter(whatsAppAdapterConfig(section, deps), deps, options);
}
