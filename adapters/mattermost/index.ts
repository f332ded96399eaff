/**
 * The Mattermost adapter: REST (`@mattermost/client`'s routes, see `api.ts`) for posts, files and
 * typing; the WebSocket API (`socket.ts`) for `posted` events. DMs and channels (answered in channels
 * when mentioned, by the gateway's one gating rule); each thread is a session and replies go into the
 * thread they answer (`root_id`). Files come in through the API into the media cache (size-capped) and go
 * out as uploads attached to the last post. Tool progress is edited in place and deleted once the reply
 * is out. A malformed event is logged and skipped; the socket reconnects with backoff.
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
import { type ReplyStreams, sameChunk } from "../shared/reply-stream.js";
import { MattermostApi } from "./api.js";
import { MattermostCatchUp } from "./catchup.js";
import { mattermostChunks } from "./format.js";
import { saveFiles, uploadFiles } from "./media.js";
import { MalformedEventError, parsePosted } from "./parse.js";
import { MattermostSocket } from "./socket.js";
import { createPost, deletePost, mattermostStreams, updatePost } from "./stream.js";
import type { MattermostAdapterConfig, MattermostMe } from "./types.js";

export type { MattermostAdapterConfig } from "./types.js";

/** Mattermost over REST + WebSocket. Build it with `createMattermostAdapter`. */
export class MattermostAdapter implements PlatformAdapter {
  readonly platform = "mattermost";
  private readonly api: MattermostApi;
  private readonly log: Logger;
  private me: MattermostMe | undefined;
  private socket: MattermostSocket | undefined;
  private starting: Promise<void> | undefined;
  private state: AdapterStatus = { state: "stopped" };
  private readonly streams: ReplyStreams<string>;
  private readonly catchUp: MattermostCatchUp;

  constructor(
    private readonly config: MattermostAdapterConfig,
    private readonly deps: AdapterDeps,
  ) {
    this.api = new MattermostApi(config.url, config.token, config.sendPerSecond);
    this.log = deps.logger;
    this.streams = mattermostStreams(this.api, deps.kv, this.log);
    this.catchUp = new MattermostCatchUp(this.api, deps.kv, this.log);
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
    const me = await this.api.call<MattermostMe>("users/me").catch((err: unknown) => {
      if (err instanceof PlatformError) throw err;
      throw new PlatformError(
        "mattermost",
        `MATTERMOST_URL ${this.config.url} did not answer as Mattermost.`,
        {
          cause: err,
        },
      );
    });
    this.me = { id: me.id, username: me.username };
    this.log.info({ botId: me.id, username: me.username }, "mattermost signed in");
    const socket = new MattermostSocket({
      url: `${this.api.route("websocket").replace(/^http/, "ws")}`,
      token: this.config.token,
      logger: this.log,
      reconnectBaseMs: this.config.reconnectBaseMs,
      pingIntervalMs: this.config.pingIntervalMs,
      onEvent: async (frame) => {
        if (frame.event === "posted") await this.onPosted(frame.data, frame.seq, onMessage);
      },
      onConnected: async () => {
        for (const data of await this.catchUp.missed(me.id)) await this.onPosted(data, undefined, onMessage);
      },
      onState: (state) => {
        if (this.socket === socket) this.state = { state };
      },
    });
    this.socket = socket;
    await socket.start();
  }

  async stop(): Promise<void> {
    const starting = this.starting;
    this.starting = undefined;
    await starting?.catch(() => undefined);
    const socket = this.socket;
    this.socket = undefined;
    this.state = { state: "stopped" };
    this.streams.stop();
    await socket?.stop();
  }

  status(): AdapterStatus {
    return this.state;
  }

  /** One post (live or caught up): parsed, its files saved when it is addressed, handed on, its position kept. */
  private async onPosted(data: unknown, seq: number | undefined, onMessage: InboundHandler): Promise<void> {
    if (!this.me) return;
    let parsed: ReturnType<typeof parsePosted>;
    try {
      parsed = parsePosted(data, this.me);
    } catch (err) {
      if (!(err instanceof MalformedEventError)) throw err;
      this.log.warn({ seq, error: err.message }, "mattermost event malformed; skipped");
      return;
    }
    if (!parsed) return;
    const { post, message } = parsed;
    if ((post.file_ids?.length ?? 0) > 0 && (this.deps.isAddressed?.(message) ?? true)) {
      const saved = await saveFiles(this.api, post, {
        cacheDir: this.deps.cacheDir,
        maxBytes: this.deps.mediaMaxBytes ?? DEFAULT_MEDIA_MAX_BYTES,
        logger: this.log,
      });
      if (saved.files.length) message.attachments = saved.files;
      if (saved.notes.length) message.text = [message.text, ...saved.notes].filter(Boolean).join("\n");
    }
    if (this.config.stream !== "off") message.streamReply = true;
    await onMessage(message);
    // Only once the gateway recorded it: a post whose recording failed is fetched again after a gap.
    this.catchUp.seen(post.channel_id, post.create_at);
  }

  /**
   * Sends a reply; one that was streamed replaces its preview posts (edited) instead of posting again,
   * and deletes previews the final text no longer needs. Files go on the last post (a new post when the
   * last chunk replaced a preview, since an edit cannot add files).
   */
  async send(chat: ChatRef, message: OutboundMessage, options: SendOptions = {}): Promise<SendResult> {
    const chunks = mattermostChunks(message.text);
    if (chunks.length === 0) chunks.push("");
    const previews = message.kind === "notice" ? [] : await this.streams.claim(chat, message.replyToId);
    const files = message.files ?? [];
    const last = chunks.length - 1;
    const ids: string[] = [];
    for (let i = options.fromChunk ?? 0; i < chunks.length; i++) {
      options.signal?.throwIfAborted();
      const preview = previews[i];
      const text = chunks[i]!;
      let id: string;
      if (preview && (sameChunk(preview, text) || (await updatePost(this.api, preview.id, text)))) {
        id = preview.id;
        if (i === last && files.length) {
          const fileIds = await uploadFiles(this.api, chat.chatId, files, options.signal);
          await createPost(this.api, chat, "", { fileIds, signal: options.signal });
        }
      } else {
        const fileIds =
          i === last && files.length ? await uploadFiles(this.api, chat.chatId, files, options.signal) : [];
        id = await createPost(this.api, chat, text, { fileIds, signal: options.signal });
      }
      ids.push(id);
      options.onChunkSent?.(i, id);
    }
    if (previews.length > 0) await this.streams.settle(chat, message.replyToId, previews, chunks.length);
    return { messageIds: ids };
  }

  /** Streams a reply into the chat as it is written (`stream: edit`). Never throws. */
  onTurnEvent(chat: ChatRef, event: AdapterTurnEvent): void {
    this.streams.onEvent(chat, event);
  }

  async edit(_chat: ChatRef, messageId: string, text: string): Promise<void> {
    const [first] = mattermostChunks(text);
    if (!(await updatePost(this.api, messageId, first ?? ""))) {
      throw new PlatformError("mattermost", `Mattermost post ${messageId} is gone; it cannot be edited.`);
    }
  }

  async deleteMessage(_chat: ChatRef, messageId: string): Promise<void> {
    await deletePost(this.api, messageId);
  }

  async sendTyping(chat: ChatRef): Promise<void> {
    // A reply being written in place says more than "typing…".
    if (this.streams.showing(chat)) return;
    try {
      await this.api.call("users/me/typing", {
        method: "POST",
        body: { channel_id: chat.chatId, parent_id: chat.threadId ?? "" },
      });
    } catch (err) {
      this.log.debug({ error: describeError(err) }, "mattermost typing failed");
    }
  }
}

/** Builds the Mattermost adapter (connects on `start`). */
export function createMattermostAdapter(
  config: MattermostAdapterConfig,
  deps: AdapterDeps,
): MattermostAdapter {
  return new MattermostAdapter(config, deps);
}
