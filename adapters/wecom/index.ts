/**
 * The WeCom (enterprise WeChat) adapter for a self-built app, with no SDK: the callback URL
 * (`/webhooks/wecom`) answers WeCom's echostr check (GET) and receives encrypted XML messages (POST),
 * each checked by `msg_signature` and its age, decrypted with the EncodingAESKey and its receiver id
 * compared with the Corp ID (`crypto.ts`); a refused request is answered 401/400 and logged. A message
 * is answered `success` only once the gateway recorded it (WeCom retries otherwise; the ledger drops the
 * repeat by `MsgId`). Replies go through the API (`api.ts`): `message/send` to a user, `appchat/send` to a
 * group chat the app created; files are uploaded as temporary media. WeCom cannot edit a message, so
 * replies are sent whole and buttons come as text.
 */
import { join } from "node:path";
import { Readable } from "node:stream";
import { describeError, PlatformError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type {
  AdapterDeps,
  AdapterStatus,
  ChatRef,
  InboundHandler,
  InboundMessage,
  OutboundFile,
  OutboundMessage,
  PlatformAdapter,
  SendOptions,
  SendResult,
} from "../../core/types.js";
import { DEFAULT_MEDIA_MAX_BYTES } from "../../core/types.js";
import { AdapterLifecycle } from "../shared/lifecycle.js";
import {
  attachmentKindOf,
  FileTooLargeError,
  readOutboundFile,
  safeFileName,
  writeCapped,
} from "../shared/media.js";
import { WecomApi } from "./api.js";
import { signatureMatches, wecomDecrypt, wecomSignature } from "./crypto.js";
import { wecomChunks } from "./format.js";
import { MalformedEventError, parseMessage, readMessage } from "./parse.js";
import type { WecomAdapterConfig } from "./types.js";
import { looksLikeXml, xmlField } from "./xml.js";

export type { WecomAdapterConfig } from "./types.js";

const text = (body: string, status = 200) =>
  new Response(body, { status, headers: { "content-type": "text/plain" } });
const IMAGE = /\.(png|jpe?g|gif|bmp)$/i;

/** WeCom app messages over the callback URL and the server API. Build it with `createWecomAdapter`. */
export class WecomAdapter implements PlatformAdapter {
  readonly platform = "wecom";
  private readonly api: WecomApi;
  private readonly log: Logger;
  private readonly life = new AdapterLifecycle();

  constructor(
    private readonly config: WecomAdapterConfig,
    private readonly deps: AdapterDeps,
  ) {
    this.api = new WecomApi(config.apiUrl.replace(/\/+$/, ""), config.corpId, config.secret);
    this.log = deps.logger;
  }

  start(onMessage: InboundHandler): Promise<void> {
    return this.life.start(onMessage, () => this.open());
  }

  private async open(): Promise<void> {
    const agent = await this.api.call(`agent/get?agentid=${this.config.agentId}`).catch((err: unknown) => {
      if (err instanceof PlatformError && err.code === "platform_auth_failed") throw err;
      throw new PlatformError(
        "wecom",
        `WeCom did not confirm WECOM_AGENT_ID ${this.config.agentId}: ${describeError(err)}. Fix: use the AgentId shown on the app's page in App Management.`,
        { cause: err },
      );
    });
    this.log.info({ agent: agent["name"], agentId: this.config.agentId }, "wecom signed in");
  }

  stop(): Promise<void> {
    return this.life.stop();
  }

  status(): AdapterStatus {
    return this.life.status();
  }

  /** Serves `/webhooks/wecom`: the echostr check (GET) and messages (POST). */
  async handleWebhook(request: Request): Promise<Response> {
    const query = new URL(request.url).searchParams;
    const body = request.method === "GET" ? "" : await request.text();
    const encrypted =
      request.method === "GET"
        ? (query.get("echostr") ?? "")
        : (looksLikeXml(body) && xmlField(body, "Encrypt")) || "";
    let plain: string;
    try {
      plain = this.unseal(query, encrypted);
    } catch (err) {
      this.log.warn({ reason: (err as Error).message }, "wecom request refused");
      return text("refused", err instanceof RefusedError ? err.status : 400);
    }
    if (request.method === "GET") return text(plain);
    const onMessage = this.life.onMessage;
    if (!onMessage) return text("not started", 503);
    try {
      await this.onCallback(plain, onMessage);
    } catch (err) {
      if (!(err instanceof MalformedEventError)) {
        this.log.error({ error: describeError(err) }, "wecom message not recorded; WeCom will retry it");
        return text("not recorded", 500);
      }
      this.log.warn({ error: err.message }, "wecom callback malformed; skipped");
    }
    return text("success");
  }

  /** Checks the signature and age of a request and decrypts its ciphertext. @throws RefusedError */
  private unseal(query: URLSearchParams, encrypted: string): string {
    if (!encrypted) throw new RefusedError(400, "no Encrypt / echostr in the request");
    const timestamp = query.get("timestamp") ?? "";
    const expected = wecomSignature(this.config.token, timestamp, query.get("nonce") ?? "", encrypted);
    if (!signatureMatches(query.get("msg_signature") ?? "", expected)) {
      throw new RefusedError(401, "the msg_signature does not match (check WECOM_TOKEN)");
    }
    if (Math.abs(Date.now() - Number(timestamp) * 1000) > (this.config.maxSkewMs ?? 300_000)) {
      throw new RefusedError(401, "the request's timestamp is too old");
    }
    let opened: { message: string; receiverId: string };
    try {
      opened = wecomDecrypt(encrypted, this.config.encodingAesKey);
    } catch {
      throw new RefusedError(400, "the message does not decrypt with WECOM_ENCODING_AES_KEY");
    }
    if (opened.receiverId !== this.config.corpId)
      throw new RefusedError(401, "the message is for another Corp ID");
    return opened.message;
  }

  private async onCallback(xml: string, onMessage: InboundHandler): Promise<void> {
    const parsed = parseMessage(readMessage(xml));
    if (!parsed) return;
    const { message, media } = parsed;
    if (media && (this.deps.isAddressed?.(message) ?? true)) await this.saveMedia(message, media);
    await onMessage(message);
  }

  private async saveMedia(message: InboundMessage, media: { id: string; name: string }): Promise<void> {
    const path = join(
      this.deps.cacheDir,
      `wecom-${safeFileName(message.messageId)}-${safeFileName(media.name)}`,
    );
    try {
      const res = await this.api.download(media.id);
      const disposition = res.headers.get("content-disposition") ?? "";
      const fileName = /filename="?([^";]+)"?/.exec(disposition)?.[1] ?? media.name;
      const mimeType = res.headers.get("content-type")?.split(";")[0] || undefined;
      const source = Readable.fromWeb(res.body as import("node:stream/web").ReadableStream<Uint8Array>);
      const sizeBytes = await writeCapped(source, path, this.deps.mediaMaxBytes ?? DEFAULT_MEDIA_MAX_BYTES);
      message.attachments = [{ kind: attachmentKindOf(mimeType), path, fileName, mimeType, sizeBytes }];
    } catch (err) {
      const reason = err instanceof FileTooLargeError ? "over the size limit" : "could not be downloaded";
      this.log.warn({ messageId: message.messageId, error: describeError(err) }, "wecom file not saved");
      message.text = [message.text, `[${media.name}: ${reason}; not attached]`].filter(Boolean).join("\n");
    }
  }

  /** Sends markdown messages, then files: to a user, or to an app group chat (`#<chatid>`). */
  async send(chat: ChatRef, message: OutboundMessage, options: SendOptions = {}): Promise<SendResult> {
    const chunks = wecomChunks(message.text);
    const ids: string[] = [];
    for (let i = options.fromChunk ?? 0; i < chunks.length; i++) {
      options.signal?.throwIfAborted();
      const id = await this.post(
        chat,
        { msgtype: "markdown", markdown: { content: chunks[i]! } },
        `${message.idempotencyKey}-${i}`,
        options.signal,
      );
      ids.push(id);
      options.onChunkSent?.(i, id);
    }
    for (const [n, file] of (message.files ?? []).entries()) {
      const payload = await this.uploadFile(file);
      await this.post(chat, payload, `${message.idempotencyKey}-f${n}`, options.signal);
    }
    return { messageIds: ids };
  }

  private async post(chat: ChatRef, payload: object, key: string, signal?: AbortSignal): Promise<string> {
    if (chat.chatId.startsWith("#")) {
      await this.api.call("appchat/send", { chatid: chat.chatId.slice(1), ...payload }, signal);
      // appchat/send names no message id.
      return key;
    }
    const answer = await this.api.call(
      "message/send",
      { touser: chat.chatId, agentid: this.config.agentId, ...payload },
      signal,
    );
    if (typeof answer["invaliduser"] === "string" && answer["invaliduser"].split("|").includes(chat.chatId)) {
      throw new PlatformError("wecom", `WeCom does not know user ${chat.chatId} in the app's visible range`);
    }
    return String(answer["msgid"] ?? key);
  }

  private async uploadFile(file: OutboundFile): Promise<object> {
    const bytes = await readOutboundFile("wecom", file.path);
    const name = file.fileName ?? file.path.split("/").pop() ?? "file";
    const type = file.mimeType?.startsWith("image/") || IMAGE.test(name) ? "image" : "file";
    const mediaId = await this.api.upload(type, name, new Uint8Array(bytes));
    return { msgtype: type, [type]: { media_id: mediaId } };
  }
}

/** A request WeCom's checks refused, with the status to answer. */
class RefusedError extends Error {
  constructor(
    readonly status: number,
    reason: string,
  ) {
    super(reason);
    this.name = "RefusedError";
  }
}

/** Builds the WeCom adapter (checks the app on `start`). */
export function createWecomAdapter(config: WecomAdapterConfig, deps: AdapterDeps): WecomAdapter {
  return new WecomAdapter(config, deps);
}
