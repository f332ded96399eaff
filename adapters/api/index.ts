/**
 * The OpenAI-compatible API server as a platform adapter: `POST /v1/chat/completions` (streaming and
 * not) and `GET /v1/models`. Each request is one inbound message; its reply arrives through the outbox
 * like any platform's and completes the HTTP response. `X-Herald-Session-Id` continues a stored
 * session; without it the request's own messages seed a new session, whose id the response carries.
 */
import { randomUUID, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { v7 as uuidv7 } from "uuid";
import { HeraldError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type {
  AdapterTurnEvent,
  ChatRef,
  InboundHandler,
  InboundMessage,
  OutboundMessage,
  PlatformAdapter,
  SendResult,
} from "../../core/types.js";
import { chatRequestSchema, contentText, readJsonBody } from "./parse.js";

export interface ApiAdapterConfig {
  /** Bearer key; when unset, requests need no key (the server then listens on loopback only). */
  key?: string | undefined;
  /** The model name reported by /v1/models besides "herald". */
  modelName: string;
  /**
   * The tokens the turn answering inbound message `messageId` used (all its model calls), for the
   * response's `usage`; undefined for a command's reply. Read when the reply is sent (already committed).
   */
  usageOf?: ((messageId: string) => TokenUsage | undefined) | undefined;
}

/** Tokens of one answer, as the response's `usage` reports them. */
export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}

/** A request waiting for its reply. */
interface Pending {
  res: ServerResponse;
  stream: boolean;
  id: string;
  created: number;
  notices: string[];
  streamed: boolean;
  /** The client asked for a usage chunk at the end of the stream (`stream_options.include_usage`). */
  includeUsage: boolean;
}

const SESSION_HEADER = "x-herald-session-id";
const SESSION_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The API adapter: a PlatformAdapter plus the HTTP entry point the gateway's server calls. */
export class ApiAdapter implements PlatformAdapter {
  readonly platform = "api";
  private onMessage: InboundHandler | undefined;
  private readonly pending = new Map<string, Pending>();
  private readonly keyBuffer: Buffer | undefined;

  constructor(
    private readonly config: ApiAdapterConfig,
    private readonly logger: Logger,
  ) {
    this.keyBuffer = config.key ? Buffer.from(config.key) : undefined;
  }

  async start(onMessage: InboundHandler): Promise<void> {
    this.onMessage = onMessage;
  }

  async stop(): Promise<void> {
    for (const p of this.pending.values())
      this.fail(p, 503, "The gateway is shutting down; retry shortly.", "unavailable");
    this.pending.clear();
    this.onMessage = undefined;
  }

  /** Serves `/v1/*`. Returns false for paths it does not own. */
  async handleHttp(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
    if (!path.startsWith("/v1/")) return false;
    if (!this.authorized(req)) {
      writeJson(
        res,
        401,
        errorBody(
          "Missing or wrong API key: send 'Authorization: Bearer <API_SERVER_KEY>'.",
          "invalid_api_key",
        ),
      );
      return true;
    }
    if (req.method === "GET" && path === "/v1/models") {
      const created = Math.floor(Date.now() / 1000);
      const ids = ["herald", this.config.modelName].filter((v, i, a) => a.indexOf(v) === i);
      writeJson(res, 200, {
        object: "list",
        data: ids.map((id) => ({ id, object: "model", created, owned_by: "herald" })),
      });
      return true;
    }
    if (req.method === "POST" && path === "/v1/chat/completions") {
      await this.chatCompletion(req, res);
      return true;
    }
    writeJson(res, 404, errorBody(`No route ${req.method} ${path}.`, "not_found"));
    return true;
  }

  async send(_chat: ChatRef, message: OutboundMessage): Promise<SendResult> {
    const id = message.replyToId;
    const p = id ? this.pending.get(id) : undefined;
    // No request waiting (client gone, or a restart): the reply is in the session already.
    if (!p || !id) return { messageIds: [] };
    if (message.kind === "notice") {
      p.notices.push(message.text);
      return { messageIds: [id] };
    }
    this.pending.delete(id);
    const text = [...p.notices, message.text].join("\n\n");
    const usage = usageBody(this.config.usageOf?.(id));
    if (p.stream) {
      if (!p.streamed) writeChunk(p, { content: text });
      writeChunk(p, {}, "stop");
      if (p.includeUsage && !p.res.writableEnded) {
        const chunk = {
          id: p.id,
          object: "chat.completion.chunk",
          created: p.created,
          model: "herald",
          choices: [],
          usage,
        };
        p.res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      }
      p.res.end("data: [DONE]\n\n");
    } else {
      writeJson(p.res, 200, {
        id: p.id,
        object: "chat.completion",
        created: p.created,
        model: "herald",
        choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
        usage,
      });
    }
    return { messageIds: [id] };
  }

  onTurnEvent(_chat: ChatRef, event: AdapterTurnEvent): void {
    const p = this.pending.get(event.replyToId);
    if (!p) return;
    if (event.type === "delta" && p.stream) {
      if (!p.streamed && p.notices.length) writeChunk(p, { content: `${p.notices.join("\n\n")}\n\n` });
      if (!p.streamed) p.notices = [];
      p.streamed = true;
      writeChunk(p, { content: event.text });
    } else if (event.type === "ended" && event.status === "cancelled") {
      this.pending.delete(event.replyToId);
      this.fail(
        p,
        409,
        "The turn was cancelled (/stop, /new, or a newer message in this session).",
        "cancelled",
      );
    }
  }

  private authorized(req: IncomingMessage): boolean {
    if (!this.keyBuffer) return true;
    const header = req.headers.authorization ?? "";
    const given = Buffer.from(header.startsWith("Bearer ") ? header.slice(7) : "");
    return given.length === this.keyBuffer.length && timingSafeEqual(given, this.keyBuffer);
  }

  private async chatCompletion(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body: unknown;
    try {
      body = await readJsonBody(req);
    } catch (err) {
      writeJson(
        res,
        400,
        errorBody(err instanceof HeraldError ? err.message : "Invalid JSON body.", "invalid_request_error"),
      );
      return;
    }
    const parsed = chatRequestSchema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      writeJson(
        res,
        400,
        errorBody(`Invalid request: ${issue?.path.join(".")} ${issue?.message}.`, "invalid_request_error"),
      );
      return;
    }
    const headerId = req.headers[SESSION_HEADER];
    const given = typeof headerId === "string" ? headerId : undefined;
    if (given !== undefined && !SESSION_ID.test(given)) {
      writeJson(
        res,
        400,
        errorBody(
          "X-Herald-Session-Id may hold 1–128 letters, digits, '.', '_' or '-'.",
          "invalid_request_error",
        ),
      );
      return;
    }
    const sessionId = given ?? randomUUID();
    const messages = parsed.data.messages;
    const last = messages[messages.length - 1]!;
    if (last.role !== "user") {
      writeJson(res, 400, errorBody("The last message must have role 'user'.", "invalid_request_error"));
      return;
    }
    const messageId = uuidv7();
    const inbound: InboundMessage = {
      platform: "api",
      messageId,
      chat: { platform: "api", chatId: sessionId },
      chatType: "dm",
      sender: { id: parsed.data.user ?? "api" },
      text: contentText(last.content),
      mentioned: true,
      context: given
        ? undefined
        : messages
            .slice(0, -1)
            .flatMap((m) =>
              m.role === "tool"
                ? []
                : [{ role: m.role as "system" | "user" | "assistant", content: contentText(m.content) }],
            ),
    };
    const stream = parsed.data.stream === true;
    if (stream) inbound.streamReply = true;
    const pending: Pending = {
      res,
      stream,
      id: `chatcmpl-${messageId}`,
      created: Math.floor(Date.now() / 1000),
      notices: [],
      streamed: false,
      includeUsage: stream && parsed.data.stream_options?.include_usage === true,
    };
    res.setHeader("X-Herald-Session-Id", sessionId);
    if (stream) {
      res.writeHead(200, {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        connection: "keep-alive",
      });
      writeChunk(pending, { role: "assistant", content: "" });
    }
    this.pending.set(messageId, pending);
    res.on("close", () => {
      if (!res.writableFinished) this.pending.delete(messageId);
    });
    if (!this.onMessage) {
      this.pending.delete(messageId);
      this.fail(pending, 503, "The gateway is not ready yet; retry shortly.", "unavailable");
      return;
    }
    try {
      const outcome = await this.onMessage(inbound);
      if (outcome !== "accepted" && outcome !== "command" && this.pending.has(messageId)) {
        this.pending.delete(messageId);
        this.fail(pending, 400, `The message was not processed (${outcome}).`, "invalid_request_error");
      }
    } catch (err) {
      this.logger.error({ err }, "api inbound failed");
      this.pending.delete(messageId);
      this.fail(pending, 500, "The gateway could not record the message; retry.", "server_error");
    }
  }

  private fail(p: Pending, status: number, message: string, type: string): void {
    if (p.res.writableEnded) return;
    if (p.stream) {
      p.res.write(`data: ${JSON.stringify(errorBody(message, type))}\n\n`);
      p.res.end("data: [DONE]\n\n");
    } else {
      writeJson(p.res, status, errorBody(message, type));
    }
  }
}

/** The OpenAI `usage` object (zeros when the reply used no model: a command's). */
function usageBody(usage: TokenUsage | undefined) {
  const prompt = usage?.promptTokens ?? 0;
  const completion = usage?.completionTokens ?? 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: usage?.cachedTokens ?? 0 },
  };
}

function errorBody(message: string, type: string) {
  return { error: { message, type, code: type } };
}

function writeJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.writableEnded) return;
  const data = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(data) });
  res.end(data);
}

function writeChunk(p: Pending, delta: Record<string, string>, finish: string | null = null): void {
  if (p.res.writableEnded) return;
  const chunk = {
    id: p.id,
    object: "chat.completion.chunk",
    created: p.created,
    model: "herald",
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
  p.res.write(`data: ${JSON.stringify(chunk)}\n\n`);
}

/** Builds the API adapter. */
export function createApiAdapter(config: ApiAdapterConfig, deps: { logger: Logger }): ApiAdapter {
  return new ApiAdapter(config, deps.logger.child({ adapter: "api" }));
}
