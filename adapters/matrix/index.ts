/**
 * The Matrix adapter on matrix-js-sdk: long-polled `/sync` with its state saved in the adapter's store
 * (a restart resumes from `since`), DMs and rooms, threads as their own sessions, invites accepted from
 * allowed users only, replies as `m.in_reply_to` with Markdown rendered to sanitised HTML.
 *
 * With `MATRIX_ENCRYPTION=true` it also reads and answers end-to-end encrypted rooms (`crypto.ts`, loaded
 * only then); without it an encrypted room gets one notice and never a plaintext reply.
 *
 * `chat = { platform: "matrix", chatId: <room id>, threadId: <thread root event id> }`.
 */
import { basename } from "node:path";
import { ClientEvent, createClient, HttpApiEvent, type MatrixClient, SyncState } from "matrix-js-sdk";
import { PlatformError } from "../../core/errors.js";
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
import { type ReplyStreams, sameChunk } from "../shared/reply-stream.js";
import { guardSdkRequests, MatrixApi, txnIdFor } from "./api.js";
import type { MatrixCrypto } from "./crypto.js";
import { chunkMarkdown, editContent, relationFor, textContent } from "./format.js";
import { resolveIdentity } from "./login.js";
import { uploadFile } from "./media.js";
import { MatrixReceiver } from "./receiver.js";
import { isEncryptedRoom } from "./rooms.js";
import { installSdkLogger, sdkLogger } from "./sdk-logger.js";
import { KvSyncStore } from "./store.js";
import { matrixStreams, replacement } from "./stream.js";
import type { BotIdentity, MatrixAdapterConfig } from "./types.js";

export { matrixConfigFrom } from "./config.js";
export type { MatrixAdapterConfig } from "./types.js";

/** How long `start()` waits for the first sync before giving up. @defaultValue 60 s */
const START_TIMEOUT_MS = 60_000;

interface Session {
  client: MatrixClient;
  api: MatrixApi;
  store: KvSyncStore;
  identity: BotIdentity;
  receiver: MatrixReceiver;
  crypto: MatrixCrypto | undefined;
}

/** Matrix through matrix-js-sdk. Build it with `createMatrixAdapter`. */
export class MatrixAdapter implements PlatformAdapter {
  readonly platform = "matrix";
  private readonly log: Logger;
  private session: Session | undefined;
  private state: AdapterStatus["state"] = "stopped";
  private readonly lastTyping = new Map<string, number>();
  private readonly streams: ReplyStreams<string>;
  /** Bumped by `stop()`, so a re-login still in flight knows it must not take over. */
  private epoch = 0;

  constructor(
    private readonly config: MatrixAdapterConfig,
    private readonly deps: AdapterDeps,
  ) {
    this.log = deps.logger.child({ platform: "matrix" });
    this.streams = matrixStreams({
      sink: {
        send: async (chat, content, txnId) => {
          const eventId = await this.require().api.sendEvent(chat.chatId, "m.room.message", content, txnId);
          this.session?.receiver.rememberOwn(eventId);
          return eventId;
        },
        redact: (chat, eventId) => this.deleteMessage(chat, eventId),
      },
      kv: deps.kv,
      logger: this.log,
      maxMessageChars: config.maxMessageChars,
      intervalMs: 2000,
    });
  }

  /**
   * Logs in (or checks the token), loads the saved sync state and runs the first sync.
   * @throws PlatformError naming the setting to fix (refused token or password, unreachable homeserver).
   */
  async start(onMessage: InboundHandler): Promise<void> {
    if (this.session) return;
    this.state = "starting";
    installSdkLogger(this.log);
    try {
      this.session = await this.connect(onMessage);
      this.state = "running";
    } catch (err) {
      this.state = "failed";
      throw err;
    }
  }

  private async connect(onMessage: InboundHandler, forceLogin = false): Promise<Session> {
    const identity = await resolveIdentity(this.config, this.deps.kv, this.log, { forceLogin });
    const store = new KvSyncStore(this.deps.kv, identity.userId, this.log);
    const client = createClient({
      baseUrl: this.config.homeserver,
      accessToken: identity.accessToken,
      userId: identity.userId,
      deviceId: identity.deviceId,
      store,
      logger: sdkLogger(this.log),
    });
    guardSdkRequests(client);
    const crypto = await this.startCrypto(client, identity);
    const api = new MatrixApi(client, identity.userId, crypto !== undefined);
    const receiver = new MatrixReceiver({
      client,
      api,
      store,
      identity,
      config: this.config,
      kv: this.deps.kv,
      isAllowed: this.deps.isAllowed,
      log: this.log,
      decrypts: crypto !== undefined,
      onMessage: (message) => {
        if (this.config.stream !== "off") message.streamReply = true;
        return onMessage(message);
      },
      sendNotice: (roomId, text) => this.sendNotice(api, roomId, text),
    });
    const prepared = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new PlatformError(
              "matrix",
              `The first /sync with ${this.config.homeserver} did not finish within ${START_TIMEOUT_MS / 1000} s. Fix: check that MATRIX_HOMESERVER is reachable.`,
              { retryable: true },
            ),
          ),
        START_TIMEOUT_MS,
      );
      timer.unref();
      client.on(ClientEvent.Sync, (state, prev) => {
        if (state === SyncState.Prepared) {
          clearTimeout(timer);
          resolve();
        }
        this.onSyncState(state, prev);
      });
    });
    client.on(HttpApiEvent.SessionLoggedOut, () => void this.onLoggedOut(onMessage));
    receiver.attach();
    await client.startClient({ initialSyncLimit: 20, pollTimeout: this.config.pollTimeoutMs ?? 30_000 });
    try {
      await prepared;
    } catch (err) {
      client.stopClient();
      crypto?.close();
      throw err;
    }
    this.log.info({ userId: identity.userId, resumed: store.hasSavedSync() }, "matrix adapter receiving");
    return { client, api, store, identity, receiver, crypto };
  }

  /** Starts Rust crypto on its persistent store when `encryption` is on (loaded only then). */
  private async startCrypto(client: MatrixClient, identity: BotIdentity): Promise<MatrixCrypto | undefined> {
    if (!this.config.encryption) return undefined;
    const { startCrypto } = await import("./crypto.js");
    return startCrypto(client, {
      homeDir: this.config.homeDir ?? this.config.cacheDir,
      userId: identity.userId,
      deviceId: identity.deviceId,
      storeKey: this.config.storeKey,
      log: this.log,
    });
  }

  private onSyncState(state: SyncState, prev: SyncState | null): void {
    const failing = state === SyncState.Error || state === SyncState.Reconnecting;
    if (failing && this.state === "running") this.state = "reconnecting";
    if (state === SyncState.Error && prev !== SyncState.Error) {
      this.log.warn({}, "matrix sync failing; the SDK retries with backoff");
    } else if (
      (state === SyncState.Syncing || state === SyncState.Catchup) &&
      this.state === "reconnecting"
    ) {
      this.state = "running";
      this.log.info({}, "matrix sync recovered");
    }
  }

  /**
   * The token stopped working while running: log in again with the password when there is one,
   * retrying with backoff while the homeserver is unreachable. A `stop()` meanwhile wins.
   */
  private async onLoggedOut(onMessage: InboundHandler): Promise<void> {
    const old = this.session;
    if (!old) return;
    this.session = undefined;
    const epoch = this.epoch;
    await this.teardown(old);
    if (!this.config.password) {
      this.state = "failed";
      this.log.error({}, "matrix access token was revoked; set a new MATRIX_ACCESS_TOKEN and restart");
      return;
    }
    this.state = "reconnecting";
    for (let attempt = 0; this.epoch === epoch; attempt++) {
      try {
        const session = await this.connect(onMessage, true);
        if (this.epoch !== epoch) {
          await this.teardown(session);
          return;
        }
        this.session = session;
        this.state = "running";
        return;
      } catch (err) {
        const retryable = err instanceof PlatformError && err.retryable;
        this.log.error(
          { err: (err as Error).message, retryable },
          "matrix login after a revoked token failed",
        );
        if (!retryable) {
          this.state = "failed";
          return;
        }
        const waitMs = Math.min(60_000, 1000 * 2 ** attempt);
        await new Promise((r) => setTimeout(r, waitMs).unref());
      }
    }
  }

  async stop(): Promise<void> {
    this.epoch++;
    const session = this.session;
    this.session = undefined;
    this.streams.stop();
    if (session) await this.teardown(session);
    this.state = "stopped";
  }

  private async teardown(session: Session): Promise<void> {
    session.receiver.detach();
    session.client.stopClient();
    session.client.removeAllListeners();
    await session.receiver.drain();
    await session.store.flush();
    session.crypto?.close();
  }

  status(): AdapterStatus {
    return { state: this.state };
  }

  private require(): Session {
    if (!this.session)
      throw new PlatformError("matrix", "The Matrix adapter is not connected.", { retryable: true });
    return this.session;
  }

  /**
   * Sends a reply as one event per chunk (about 4,000 characters each), then the files. Chunk `i` uses a
   * transaction id derived from `idempotencyKey` and `i`, so a retry never posts twice. In a thread every
   * chunk goes into the thread; the first chunk answers `replyToId`.
   */
  async send(chat: ChatRef, message: OutboundMessage, options: SendOptions = {}): Promise<SendResult> {
    const { api, client, crypto } = this.require();
    const room = client.getRoom(chat.chatId);
    const encrypted = room !== null && isEncryptedRoom(room);
    if (encrypted && !crypto) {
      throw new PlatformError(
        "matrix",
        `Room ${chat.chatId} is end-to-end encrypted and encryption is off: not sending plaintext there. Fix: set MATRIX_ENCRYPTION=true.`,
      );
    }
    const kind = message.kind === "notice" ? "notice" : "reply";
    const { text, files } = encrypted
      ? withoutFiles(message)
      : { text: message.text, files: message.files ?? [] };
    const chunks = chunkMarkdown(text, this.config.maxMessageChars);
    const previews = kind === "notice" ? [] : await this.streams.claim(chat, message.replyToId);
    const ids: string[] = [];
    let previous: string | undefined;
    for (let i = options.fromChunk ?? 0; i < chunks.length + files.length; i++) {
      const preview = i < chunks.length ? previews[i] : undefined;
      if (preview) {
        // A streamed preview shows this chunk's place: replace its text (idempotent by txn id).
        if (!sameChunk(preview, chunks[i])) {
          const txnId = txnIdFor(`${message.idempotencyKey}.replace`, i);
          await api.sendEvent(chat.chatId, "m.room.message", replacement(preview.id, chunks[i]!), txnId);
        }
        ids.push(preview.id);
        previous = preview.id;
        options.onChunkSent?.(i, preview.id);
        continue;
      }
      const content: Record<string, unknown> =
        i < chunks.length
          ? { ...textContent(chunks[i]!, kind), "m.mentions": {} }
          : await uploadFile(client, files[i - chunks.length]!);
      const relation = relationFor(chat, i === 0 ? message.replyToId : undefined, previous);
      if (relation) content["m.relates_to"] = relation;
      const eventId = await api.sendEvent(
        chat.chatId,
        "m.room.message",
        content,
        txnIdFor(message.idempotencyKey, i),
        options.signal,
      );
      this.session?.receiver.rememberOwn(eventId);
      ids.push(eventId);
      previous = eventId;
      options.onChunkSent?.(i, eventId);
    }
    if (previews.length > 0) await this.streams.settle(chat, message.replyToId, previews, chunks.length);
    if (kind === "reply" && this.lastTyping.delete(chat.chatId)) {
      void api.typing(chat.chatId, false, 0).catch(() => undefined);
    }
    return { messageIds: ids };
  }

  /** Streams a reply into the room as it is written (`stream: edit`). */
  onTurnEvent(chat: ChatRef, event: AdapterTurnEvent): void {
    this.streams.onEvent(chat, event);
  }

  /** Replaces a status message's text (`m.replace`). */
  async edit(chat: ChatRef, messageId: string, text: string): Promise<void> {
    const { api } = this.require();
    const content = editContent(messageId, text);
    await api.sendEvent(chat.chatId, "m.room.message", content, txnIdFor(`edit.${messageId}.${text}`, 0));
  }

  async deleteMessage(chat: ChatRef, messageId: string): Promise<void> {
    await this.require().api.redact(chat.chatId, messageId, txnIdFor(`redact.${messageId}`, 0));
  }

  /** Typing for 5 s; at most one call per room every 2 s. */
  async sendTyping(chat: ChatRef): Promise<void> {
    const { api } = this.require();
    const now = Date.now();
    if (now - (this.lastTyping.get(chat.chatId) ?? 0) < 2000) return;
    this.lastTyping.set(chat.chatId, now);
    await api.typing(chat.chatId, true, 5000);
  }

  private async sendNotice(api: MatrixApi, roomId: string, text: string): Promise<void> {
    await api.sendEvent(
      roomId,
      "m.room.message",
      { ...textContent(text, "notice"), "m.mentions": {} },
      txnIdFor(`notice.${roomId}.${text}`, 0),
    );
  }
}

/**
 * An encrypted room gets no uploads: the media repository would hold them in plaintext (encrypted
 * attachments are not supported yet). The reply says what was left out instead.
 */
function withoutFiles(message: OutboundMessage): { text: string; files: [] } {
  const names = (message.files ?? []).map((f) => f.fileName ?? basename(f.path));
  if (names.length === 0) return { text: message.text, files: [] };
  return {
    text: `${message.text}\n\n(Not attached, as files are not encrypted yet: ${names.join(", ")})`,
    files: [],
  };
}

/** Builds the Matrix adapter. */
export function createMatrixAdapter(config: MatrixAdapterConfig, deps: AdapterDeps): MatrixAdapter {
  return new MatrixAdapter(config, deps);
}
