/**
 * The Signal adapter: Herald talks to a signal-cli daemon the user runs (`signal-cli -a <account>
 * daemon --http 127.0.0.1:8080`): JSON-RPC for `send`, `sendTyping`, `sendReaction`, `listGroups` and
 * `getAttachment`, the SSE stream `/api/v1/events` for received messages. DMs and groups; in groups a
 * mention of the bot or a reply quoting it addresses it, and replies quote the message they answer.
 * While a turn runs its message carries a reaction (👀), removed when the reply is sent. No edits or
 * deletions (progress shows as typing). The last handled event id is kept, so a restart resumes after it.
 */
import { formatChat } from "../../core/chat.js";
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
import { SignalEventStream, type SseEvent } from "./events.js";
import { signalChunks } from "./format.js";
import { dataUri, saveAttachments } from "./media.js";
import { GROUP_PREFIX, messageRef, parseReceive, type SignalMe, targetOf } from "./parse.js";
import { SignalRpc } from "./rpc.js";
import type { SignalAdapterConfig, SignalReceive } from "./types.js";

export type { SignalAdapterConfig } from "./types.js";

const LAST_EVENT_KEY = "events.last-id";

/** Signal through signal-cli's HTTP daemon. Build it with `createSignalAdapter`. */
export class SignalAdapter implements PlatformAdapter {
  readonly platform = "signal";
  private readonly rpc: SignalRpc;
  private readonly log: Logger;
  private readonly me: SignalMe;
  private stream: SignalEventStream | undefined;
  private starting: Promise<void> | undefined;
  private state: AdapterStatus = { state: "stopped" };
  /** Per chat: the newest accepted message not reacted to yet. */
  private readonly pendingReaction = new Map<string, string>();
  /** Messages carrying the working reaction now. */
  private readonly reacted = new Set<string>();
  /** Reaction calls in order (a removal never overtakes its addition). */
  private reactions: Promise<void> = Promise.resolve();

  constructor(
    private readonly config: SignalAdapterConfig,
    private readonly deps: AdapterDeps,
  ) {
    this.rpc = new SignalRpc(config.httpUrl, config.account);
    this.log = deps.logger;
    this.me = { account: config.account, uuid: config.accountUuid };
  }

  start(onMessage: InboundHandler): Promise<void> {
    this.starting ??= this.open(onMessage).catch((err: unknown) => {
      this.starting = undefined;
      this.state = { state: "failed", detail: describeError(err) };
      throw err;
    });
    return this.starting;
  }

  private async open(onMessage: InboundHandler): Promise<void> {
    this.state = { state: "starting" };
    // Proves the daemon answers and knows the account before anything is received.
    const groups = (await this.rpc.call("listGroups")) as unknown[] | undefined;
    this.log.info({ groups: groups?.length ?? 0 }, "signal-cli reachable");
    const stream = new SignalEventStream({
      url: new URL("/api/v1/events", this.config.httpUrl).toString(),
      logger: this.log,
      lastEventId: this.deps.kv.get(LAST_EVENT_KEY),
      reconnectBaseMs: this.config.reconnectBaseMs,
      onEvent: async (event) => {
        await this.onEvent(event, onMessage);
        if (event.id) this.deps.kv.set(LAST_EVENT_KEY, event.id);
      },
      onState: (state) => {
        if (this.stream === stream) this.state = { state };
      },
    });
    this.stream = stream;
    await stream.start();
  }

  async stop(): Promise<void> {
    const starting = this.starting;
    this.starting = undefined;
    await starting?.catch(() => undefined);
    const stream = this.stream;
    this.stream = undefined;
    this.state = { state: "stopped" };
    await stream?.stop();
  }

  status(): AdapterStatus {
    return this.state;
  }

  private async onEvent(event: SseEvent, onMessage: InboundHandler): Promise<void> {
    if (event.event !== "receive" || !event.data) return;
    const parsed = JSON.parse(event.data) as SignalReceive | { method?: string; params?: SignalReceive };
    const params = "envelope" in parsed ? parsed : (parsed as { params?: SignalReceive }).params;
    if (!params?.envelope) return;
    if (params.account && params.account !== this.config.account) return;
    const message = parseReceive(params, this.me);
    if (!message) return;
    const attachments = params.envelope.dataMessage?.attachments ?? [];
    if (attachments.length && (this.deps.isAddressed?.(message) ?? true)) {
      try {
        const saved = await saveAttachments(this.rpc, message.chat, attachments, {
          cacheDir: this.deps.cacheDir,
          maxBytes: this.deps.mediaMaxBytes ?? DEFAULT_MEDIA_MAX_BYTES,
          stamp: String(message.sentAt ?? Date.now()),
        });
        if (saved.files.length) message.attachments = saved.files;
        if (saved.notes.length) message.text = [message.text, ...saved.notes].filter(Boolean).join("\n");
      } catch (err) {
        this.log.warn({ error: describeError(err) }, "signal attachment download failed");
        message.text = [message.text, "[an attachment could not be downloaded]"].filter(Boolean).join("\n");
      }
    }
    const outcome = await onMessage(message);
    if (outcome === "accepted") this.pendingReaction.set(formatChat(message.chat), message.messageId);
  }

  async send(chat: ChatRef, message: OutboundMessage, options: SendOptions = {}): Promise<SendResult> {
    const chunks = signalChunks(message.text);
    if (chunks.length === 0) chunks.push({ text: "", styles: [] });
    const files = message.files ?? [];
    const isGroup = chat.chatId.startsWith(GROUP_PREFIX);
    const quote = isGroup && message.replyToId ? messageRef(message.replyToId) : undefined;
    const ids: string[] = [];
    for (let i = options.fromChunk ?? 0; i < chunks.length; i++) {
      const chunk = chunks[i]!;
      const params: Record<string, unknown> = { ...targetOf(chat), message: chunk.text };
      if (chunk.styles.length) params["textStyle"] = chunk.styles;
      if (i === 0 && quote) {
        params["quoteTimestamp"] = quote.timestamp;
        params["quoteAuthor"] = quote.author;
      }
      if (i === chunks.length - 1 && files.length)
        params["attachments"] = await Promise.all(files.map(dataUri));
      const result = (await this.rpc.call("send", params, options.signal)) as
        | { timestamp?: number }
        | undefined;
      const id = String(result?.timestamp ?? Date.now());
      ids.push(id);
      options.onChunkSent?.(i, id);
    }
    if (message.replyToId) await this.unreact(chat, message.replyToId);
    return { messageIds: ids };
  }

  async sendTyping(chat: ChatRef): Promise<void> {
    try {
      await this.rpc.call("sendTyping", targetOf(chat));
    } catch (err) {
      this.log.debug({ error: describeError(err) }, "signal typing failed");
    }
    const key = formatChat(chat);
    const pending = this.pendingReaction.get(key);
    if (pending && this.config.workingReaction) {
      this.pendingReaction.delete(key);
      await this.react(chat, pending, false);
    }
  }

  private async unreact(chat: ChatRef, messageId: string): Promise<void> {
    if (!this.reacted.has(messageId)) return;
    this.reacted.delete(messageId);
    await this.react(chat, messageId, true);
  }

  /** Queues a reaction call. Best effort: a failure is logged, never thrown. */
  private react(chat: ChatRef, messageId: string, remove: boolean): Promise<void> {
    const ref = messageRef(messageId);
    if (!ref || !this.config.workingReaction) return Promise.resolve();
    if (!remove) this.reacted.add(messageId);
    this.reactions = this.reactions.then(() => this.callReaction(chat, ref, remove));
    return this.reactions;
  }

  private async callReaction(
    chat: ChatRef,
    ref: { timestamp: number; author: string },
    remove: boolean,
  ): Promise<void> {
    try {
      await this.rpc.call("sendReaction", {
        ...targetOf(chat),
        emoji: this.config.workingReaction,
        targetAuthor: ref.author,
        targetTimestamp: ref.timestamp,
        remove,
      });
    } catch (err) {
      this.log.debug({ error: describeError(err) }, "signal reaction failed");
    }
  }
}

/** Builds the Signal adapter (connects on `start`). */
export function createSignalAdapter(config: SignalAdapterConfig, deps: AdapterDeps): SignalAdapter {
  return new SignalAdapter(config, deps);
}
