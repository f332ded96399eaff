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
  ChatRef,
  InboundHandler,
  OutboundMessage,
  PlatformAdapter,
  SendOptions,
  SendResult,
} from "../../core/types.js";
import { DEFAULT_MEDIA_MAX_BYTES } from "../../core/types.js";
import { MattermostApi, MattermostApiError } from "./api.js";
import { mattermostChunks } from "./format.js";
import { saveFiles, uploadFiles } from "./media.js";
import { MalformedEventError, parsePosted } from "./parse.js";
import { MattermostSocket } from "./socket.js";
import type { MattermostAdapterConfig, MattermostFrame, MattermostMe } from "./types.js";

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

  constructor(
    private readonly config: MattermostAdapterConfig,
    private readonly deps: AdapterDeps,
  ) {
    this.api = new MattermostApi(config.url, config.token, config.sendPerSecond);
    this.log = deps.logger;
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
      onEvent: (frame) => this.onEvent(frame, onMessage),
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
    await socket?.stop();
  }

  status(): AdapterStatus {
    return this.state;
  }

  private async onEvent(frame: MattermostFrame, onMessage: InboundHandler): Promise<void> {
    if (frame.event !== "posted" || !this.me) return;
    let parsed: ReturnType<typeof parsePosted>;
    try {
      parsed = parsePosted(frame.data, this.me);
    } catch (err) {
      if (!(err instanceof MalformedEventError)) throw err;
      this.log.warn({ seq: frame.seq, error: err.message }, "mattermost event malformed; skipped");
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
    await onMessage(message);
  }

  async send(chat: ChatRef, message: OutboundMessage, options: SendOptions = {}): Promise<SendResult> {
    const chunks = mattermostChunks(message.text);
    if (chunks.length === 0) chunks.push("");
    const ids: string[] = [];
    const last = chunks.length - 1;
    for (let i = options.fromChunk ?? 0; i < chunks.length; i++) {
      const fileIds =
        i === last && message.files?.length
          ? await uploadFiles(this.api, chat.chatId, message.files, options.signal)
          : [];
      const post = await this.api.call<{ id: string }>("posts", {
        method: "POST",
        body: {
          channel_id: chat.chatId,
          message: chunks[i],
          ...(chat.threadId ? { root_id: chat.threadId } : {}),
          ...(fileIds.length ? { file_ids: fileIds } : {}),
        },
        signal: options.signal,
      });
      ids.push(post.id);
      options.onChunkSent?.(i, post.id);
    }
    return { messageIds: ids };
  }

  async edit(_chat: ChatRef, messageId: string, text: string): Promise<void> {
    const [first] = mattermostChunks(text);
    await this.api.call(`posts/${encodeURIComponent(messageId)}`, {
      method: "PUT",
      body: { id: messageId, message: first ?? "" },
    });
  }

  async deleteMessage(_chat: ChatRef, messageId: string): Promise<void> {
    try {
      await this.api.call(`posts/${encodeURIComponent(messageId)}`, { method: "DELETE" });
    } catch (err) {
      // Already gone: a retried delete succeeds.
      if (err instanceof MattermostApiError && err.status === 404) return;
      throw err;
    }
  }

  async sendTyping(chat: ChatRef): Promise<void> {
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
