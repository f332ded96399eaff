/**
 * The DingTalk adapter: an app robot in Stream mode (`stream.ts`: `dingtalk-stream`'s DWClient, no public
 * URL needed). Robot messages (one-to-one chats, group @mentions) and card button clicks arrive as stream
 * callbacks; each is acknowledged only after the gateway recorded it, so DingTalk redelivers one that was
 * not (the ledger drops the repeat by `msgId`); a malformed one is logged, acknowledged and skipped.
 * Replies go through the robot send API with the app's access token (`api.ts`): `oToMessages/batchSend`
 * to a user, `groupMessages/send` to a group, as Markdown; a message with buttons is an interactive card
 * whose clicks come back as the clicker's messages, after which the card loses its buttons.
 */
import { join } from "node:path";
import { Readable } from "node:stream";
import { TOPIC_CARD, TOPIC_ROBOT } from "dingtalk-stream";
import { describeError, PlatformError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type {
  AdapterDeps,
  AdapterStatus,
  ChatRef,
  InboundHandler,
  InboundMessage,
  OutboundMessage,
  PlatformAdapter,
  SendOptions,
  SendResult,
} from "../../core/types.js";
import { DEFAULT_MEDIA_MAX_BYTES } from "../../core/types.js";
import { attachmentKindOf, FileTooLargeError, safeFileName, writeCapped } from "../shared/media.js";
import { DingtalkApi } from "./api.js";
import { cardData, dingtalkChunks, markdownParam } from "./format.js";
import { MalformedEventError, parseCardCallback, parseRobotMessage } from "./parse.js";
import { GatewayClient, readCallback, type StreamCallback } from "./stream.js";
import type { DingtalkAdapterConfig } from "./types.js";

export type { DingtalkAdapterConfig } from "./types.js";

const isGroup = (chat: ChatRef) => chat.chatId.startsWith("cid");

/** DingTalk robot over Stream mode + the OpenAPI. Build it with `createDingtalkAdapter`. */
export class DingtalkAdapter implements PlatformAdapter {
  readonly platform = "dingtalk";
  readonly sendsButtons = true;
  private readonly api: DingtalkApi;
  private readonly log: Logger;
  private readonly robotCode: string;
  private client: GatewayClient | undefined;
  private starting: Promise<void> | undefined;
  private failed: AdapterStatus | undefined;

  constructor(
    private readonly config: DingtalkAdapterConfig,
    private readonly deps: AdapterDeps,
  ) {
    this.api = new DingtalkApi(config.apiUrl.replace(/\/+$/, ""), config.clientId, config.clientSecret);
    this.log = deps.logger;
    this.robotCode = config.robotCode ?? config.clientId;
  }

  start(onMessage: InboundHandler): Promise<void> {
    this.starting ??= this.open(onMessage).catch((err: unknown) => {
      this.starting = undefined;
      this.client?.disconnect();
      this.client = undefined;
      this.failed = { state: "failed", detail: describeError(err) };
      throw err;
    });
    return this.starting;
  }

  private async open(onMessage: InboundHandler): Promise<void> {
    this.failed = undefined;
    const client = new GatewayClient(
      { clientId: this.config.clientId, clientSecret: this.config.clientSecret },
      `${this.api.base}/v1.0/gateway/connections/open`,
    );
    client.registerAllEventListener(() => ({ status: "SUCCESS" as never }));
    client.registerCallbackListener(
      TOPIC_ROBOT,
      (m) => void this.onCallback(client, readCallback(m), onMessage),
    );
    client.registerCallbackListener(
      TOPIC_CARD,
      (m) => void this.onCallback(client, readCallback(m), onMessage),
    );
    this.client = client;
    await client.getEndpoint();
    await client._connect();
    this.log.info({ clientId: this.config.clientId }, "dingtalk stream connected");
  }

  async stop(): Promise<void> {
    await this.starting?.catch(() => undefined);
    this.starting = undefined;
    const client = this.client;
    this.client = undefined;
    if (client) {
      client.removeAllListeners();
      client.disconnect();
    }
    this.failed = undefined;
  }

  status(): AdapterStatus {
    if (this.failed) return this.failed;
    if (!this.client) return { state: "stopped" };
    return this.client.connected ? { state: "running" } : { state: "reconnecting" };
  }

  /** One callback: handed on, then acknowledged (unless recording failed: DingTalk redelivers it). */
  private async onCallback(
    client: GatewayClient,
    callback: StreamCallback,
    onMessage: InboundHandler,
  ): Promise<void> {
    try {
      if (callback.topic === TOPIC_ROBOT) await this.onRobotMessage(callback.data, onMessage);
      else await this.onCardClick(callback.data, onMessage);
    } catch (err) {
      if (!(err instanceof MalformedEventError)) {
        this.log.error(
          { topic: callback.topic, error: describeError(err) },
          "dingtalk callback not recorded; DingTalk will redeliver it",
        );
        return;
      }
      this.log.warn({ topic: callback.topic, error: err.message }, "dingtalk callback malformed; skipped");
    }
    if (this.client === client) client.socketCallBackResponse(callback.messageId, {});
  }

  private async onRobotMessage(data: unknown, onMessage: InboundHandler): Promise<void> {
    const parsed = parseRobotMessage(data);
    if (!parsed) return;
    const { message, downloads } = parsed;
    if (downloads.length > 0 && (this.deps.isAddressed?.(message) ?? true))
      await this.saveFiles(message, downloads);
    await onMessage(message);
  }

  private async onCardClick(data: unknown, onMessage: InboundHandler): Promise<void> {
    const click = parseCardCallback(data, this.deps.kv);
    if (!click) return;
    await onMessage(click.message);
    const shown = this.deps.kv.get(`cardtext:${click.cardBizId}`);
    if (shown !== undefined) {
      await this.updateCard(click.cardBizId, `${shown}\n\n✓ ${click.label}`).catch((err: unknown) =>
        this.log.warn({ error: describeError(err) }, "dingtalk card not settled"),
      );
    }
  }

  private async saveFiles(
    message: InboundMessage,
    downloads: { code: string; name: string }[],
  ): Promise<void> {
    const notes: string[] = [];
    message.attachments = [];
    for (const [i, d] of downloads.entries()) {
      const path = join(
        this.deps.cacheDir,
        `dingtalk-${safeFileName(message.messageId)}-${i}-${safeFileName(d.name)}`,
      );
      try {
        const answer = await this.api.call("robot/messageFiles/download", {
          downloadCode: d.code,
          robotCode: this.robotCode,
        });
        const res = await fetch(String(answer["downloadUrl"]));
        if (!res.ok || !res.body) throw new Error(`download answered HTTP ${res.status}`);
        const mimeType = res.headers.get("content-type")?.split(";")[0] || undefined;
        const source = Readable.fromWeb(res.body as import("node:stream/web").ReadableStream<Uint8Array>);
        const sizeBytes = await writeCapped(source, path, this.deps.mediaMaxBytes ?? DEFAULT_MEDIA_MAX_BYTES);
        message.attachments.push({
          kind: attachmentKindOf(mimeType),
          path,
          fileName: d.name,
          mimeType,
          sizeBytes,
        });
      } catch (err) {
        const reason = err instanceof FileTooLargeError ? "over the size limit" : "could not be downloaded";
        this.log.warn({ messageId: message.messageId, error: describeError(err) }, "dingtalk file not saved");
        notes.push(`[${d.name}: ${reason}; not attached]`);
      }
    }
    if (notes.length) message.text = [message.text, ...notes].filter(Boolean).join("\n");
  }

  /** Sends Markdown robot messages (the last one a card when there are buttons). */
  async send(chat: ChatRef, message: OutboundMessage, options: SendOptions = {}): Promise<SendResult> {
    const names = (message.files ?? []).map(
      (f) => `📎 ${f.fileName ?? f.path.split("/").pop()} (files are not sent on DingTalk)`,
    );
    const chunks = dingtalkChunks([message.text, ...names].filter(Boolean).join("\n\n"));
    const last = chunks.length - 1;
    const ids: string[] = [];
    for (let i = options.fromChunk ?? 0; i < chunks.length; i++) {
      options.signal?.throwIfAborted();
      const buttons = i === last ? (message.buttons ?? []) : [];
      const id =
        buttons.length > 0
          ? await this.sendCard(chat, chunks[i]!, message, i)
          : await this.sendMarkdown(chat, chunks[i]!, options.signal);
      ids.push(id);
      options.onChunkSent?.(i, id);
    }
    return { messageIds: ids };
  }

  private async sendMarkdown(chat: ChatRef, text: string, signal?: AbortSignal): Promise<string> {
    const common = { robotCode: this.robotCode, msgKey: "sampleMarkdown", msgParam: markdownParam(text) };
    const answer = isGroup(chat)
      ? await this.api.call(
          "robot/groupMessages/send",
          { ...common, openConversationId: chat.chatId },
          { signal },
        )
      : await this.api.call("robot/oToMessages/batchSend", { ...common, userIds: [chat.chatId] }, { signal });
    const invalid = [
      ...((answer["invalidStaffIdList"] as string[] | undefined) ?? []),
      ...((answer["flowControlledStaffIdList"] as string[] | undefined) ?? []),
    ];
    if (invalid.includes(chat.chatId)) {
      throw new PlatformError(
        "dingtalk",
        `DingTalk did not deliver to ${chat.chatId} (unknown or flow-controlled user)`,
      );
    }
    return String(answer["processQueryKey"] ?? "");
  }

  private async sendCard(
    chat: ChatRef,
    text: string,
    message: OutboundMessage,
    index: number,
  ): Promise<string> {
    const cardBizId = `herald-${message.idempotencyKey}-${index}`.replace(/[^\w-]/g, "").slice(0, 64);
    await this.api.call("im/v1.0/robot/interactiveCards/send", {
      cardTemplateId: "StandardCard",
      cardBizId,
      robotCode: this.robotCode,
      cardData: cardData(text, message.buttons ?? [], this.deps.kv),
      ...(isGroup(chat)
        ? { openConversationId: chat.chatId }
        : { singleChatReceiver: JSON.stringify({ userId: chat.chatId }) }),
    });
    const chatType = isGroup(chat) ? "group" : "dm";
    this.deps.kv.set(`card:${cardBizId}`, JSON.stringify({ chatId: chat.chatId, chatType }));
    this.deps.kv.set(`cardtext:${cardBizId}`, text);
    return cardBizId;
  }

  private async updateCard(cardBizId: string, text: string): Promise<void> {
    await this.api.call(
      "im/robots/interactiveCards",
      { cardBizId, cardData: cardData(text, []) },
      { method: "PUT" },
    );
  }

  /** The card shows `text` and no buttons. */
  async settleButtons(_chat: ChatRef, messageId: string, text: string): Promise<void> {
    this.deps.kv.delete(`cardtext:${messageId}`);
    await this.updateCard(messageId, dingtalkChunks(text)[0] ?? "");
  }
}

/** Builds the DingTalk adapter (connects the stream on `start`). */
export function createDingtalkAdapter(config: DingtalkAdapterConfig, deps: AdapterDeps): DingtalkAdapter {
  return new DingtalkAdapter(config, deps);
}
