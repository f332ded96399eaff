/**
 * The OpenAI-compatible API server as a platform adapter: `POST /v1/chat/completions` (streaming and
 * not), OpenAI's Responses API (`/v1/responses`, responses.ts) and `GET /v1/models`. Each request is one inbound message; its reply arrives through the outbox
 * like any platform's and completes the HTTP response. `X-Herald-Session-Id` continues a stored
 * session; without it the request's own messages seed a new session, whose id the response carries.
 * Herald's extensions, for its own clients and ignored by OpenAI's: a request with `"herald_events":
 * true` gets tool progress and a reply's buttons (as named SSE events when streamed, `herald_buttons`
 * otherwise) instead of the buttons' text; `/v1/herald/*` (herald.ts) reads the chat's status,
 * commands, sessions and history.
 */
import { randomUUID, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { withButtonsFallback } from "../../core/buttons.js";
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
import { uuidv7 } from "../../core/uuid-v7.js";
import type { ChatPort } from "../shared/chat-port.js";
import { failPending, type Pending, unstreamedPart, writeChunk, writeEvent } from "./completions-stream.js";
import { heraldRoute } from "./herald.js";
import { chatRequestSchema, contentText, readJsonBody } from "./parse.js";
import {
  errorBody,
  failureStatus,
  fieldName,
  filesOf,
  type TokenUsage,
  usageBody,
  writeJson,
} from "./respond.js";
import { type ResponseStorePort, ResponsesApi } from "./responses.js";

export { failureStatus, type TokenUsage } from "./respond.js";
export type { ResponseStorePort, StoredResponse } from "./responses.js";

export interface ApiAdapterConfig {
  /** Bearer key; when unset, requests need no key (the server then listens on loopback only). */
  key?: string | undefined;
  /** The model name reported by /v1/models besides "herald". */
  modelName: string;
  /**
   * A stream with no text yet sends its 200 and first chunk after this long anyway, then an SSE comment
   * as often, so proxies and clients waiting on a long tool-using turn do not time out. Before it, a
   * failure is a real HTTP status; after it, an error event. @defaultValue 10_000
   */
  streamKeepAliveMs?: number | undefined;
  /**
   * The tokens the turn answering inbound message `messageId` used (all its model calls), for the
   * response's `usage`; undefined for a command's reply. Read when the reply is sent (already committed).
   */
  usageOf?: ((messageId: string) => TokenUsage | undefined) | undefined;
  /** What `/v1/herald/*` reads; unset, those routes answer 404. */
  chat?: ChatPort | undefined;
  /** Where `/v1/responses` keeps stored responses; unset, none are kept. */
  responses?: ResponseStorePort | undefined;
  /** How long a stored response lives. @defaultValue 30 days */
  responsesTtlMs?: number | undefined;
}

const SESSION_HEADER = "x-herald-session-id";
const SESSION_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The API adapter: a PlatformAdapter plus the HTTP entry point the gateway's server calls. */
export class ApiAdapter implements PlatformAdapter {
  readonly platform = "api";
  /** Clients that asked for them get the buttons as data; the others their text (see `send`). */
  readonly sendsButtons = true;
  private onMessage: InboundHandler | undefined;
  private readonly pending = new Map<string, Pending>();
  private readonly keyBuffer: Buffer | undefined;
  private readonly responses: ResponsesApi;

  constructor(
    private readonly config: ApiAdapterConfig,
    private readonly logger: Logger,
  ) {
    this.keyBuffer = config.key ? Buffer.from(config.key) : undefined;
    this.responses = new ResponsesApi({
      store: config.responses,
      ttlMs: config.responsesTtlMs,
      keepAliveMs: config.streamKeepAliveMs,
      usageOf: config.usageOf,
      submit: (message) => this.onMessage?.(message),
      logger,
    });
  }

  async start(onMessage: InboundHandler): Promise<void> {
    this.onMessage = onMessage;
  }

  async stop(): Promise<void> {
    for (const p of this.pending.values())
      failPending(p, 503, "The gateway is shutting down; retry shortly.", "unavailable");
    this.pending.clear();
    this.responses.stop();
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
    if (path.startsWith("/v1/responses") && (await this.responses.handleHttp(req, res, path))) return true;
    if (req.method === "GET" && path.startsWith("/v1/herald/")) {
      const header = req.headers[SESSION_HEADER];
      const sessionId = typeof header === "string" && SESSION_ID.test(header) ? header : undefined;
      const query = new URL(req.url ?? "/", "http://localhost").searchParams;
      const answer = await heraldRoute(this.config.chat, path, query, sessionId).catch((err: unknown) => {
        this.logger.error({ err }, "herald route failed");
        return {
          status: 500,
          body: errorBody("The gateway could not read the chat; retry.", "server_error"),
        };
      });
      if (answer) {
        writeJson(res, answer.status, answer.body);
        return true;
      }
    }
    writeJson(res, 404, errorBody(`No route ${req.method} ${path}.`, "not_found"));
    return true;
  }

  async send(_chat: ChatRef, given: OutboundMessage): Promise<SendResult> {
    const id = given.replyToId;
    // A Responses request's reply, or one no chat completion waits for (its stored response may).
    if (id && !this.pending.has(id)) {
      const waiting = this.responses.owns(id);
      this.responses.send(id, withButtonsFallback(given));
      return { messageIds: waiting ? [id] : [] };
    }
    const p = id ? this.pending.get(id) : undefined;
    // No request waiting (client gone, or a restart): the reply is in the session already.
    if (!p || !id) return { messageIds: [] };
    const buttons = p.events ? given.buttons : undefined;
    const message = p.events ? given : withButtonsFallback(given);
    if (message.kind === "notice") {
      p.notices.push(message.text);
      return { messageIds: [id] };
    }
    this.pending.delete(id);
    if (message.kind === "error") {
      const { status, type, code, retry } = failureStatus(message.failure?.code);
      failPending(p, status, message.text, type, code, message.failure?.retryAfterMs, retry);
      return { messageIds: [id] };
    }
    const text = [...p.notices, message.text].join("\n\n");
    const usage = usageBody(this.config.usageOf?.(id));
    if (p.stream) {
      if (!p.streamed) writeChunk(p, { content: text });
      else {
        const rest = unstreamedPart(message.text, p.streamedTail);
        if (rest) writeChunk(p, { content: rest });
      }
      if (buttons?.length) writeEvent(p, "herald.buttons", { buttons });
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
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: text,
              ...filesOf(message),
              ...(buttons?.length ? { herald_buttons: buttons } : {}),
            },
            finish_reason: "stop",
          },
        ],
        usage,
      });
    }
    return { messageIds: [id] };
  }

  onTurnEvent(_chat: ChatRef, event: AdapterTurnEvent): void {
    if (!this.pending.has(event.replyToId)) {
      this.responses.onTurnEvent(event);
      return;
    }
    const p = this.pending.get(event.replyToId);
    if (!p) return;
    if (event.type === "delta" && p.stream) {
      if (!p.streamed && p.notices.length) writeChunk(p, { content: `${p.notices.join("\n\n")}\n\n` });
      if (!p.streamed) p.notices = [];
      p.streamed = true;
      p.streamedTail = (p.streamedTail + event.text).slice(-8192);
      writeChunk(p, { content: event.text });
    } else if (event.type === "tool" && p.events && p.stream) {
      writeEvent(p, "herald.tool", { line: event.line, ...(event.callId ? { callId: event.callId } : {}) });
    } else if (event.type === "tool-end" && p.events && p.stream) {
      const { callId, ok, durationMs, result } = event;
      writeEvent(p, "herald.tool_end", { callId, ok, durationMs, ...(result ? { result } : {}) });
    } else if (event.type === "ended" && event.status === "cancelled") {
      this.pending.delete(event.replyToId);
      failPending(
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
      const param = fieldName(issue?.path ?? []);
      writeJson(
        res,
        400,
        errorBody(
          `Invalid request: '${param || "body"}': ${issue?.message ?? "invalid"}.`,
          "invalid_request_error",
          "invalid_request_error",
          param || null,
        ),
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
      writeJson(
        res,
        400,
        errorBody(
          `The last message must have role 'user' (messages[${messages.length - 1}].role is '${last.role}').`,
          "invalid_request_error",
          "invalid_request_error",
          `messages[${messages.length - 1}].role`,
        ),
      );
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
      streamedTail: "",
      includeUsage: stream && parsed.data.stream_options?.include_usage === true,
      events: parsed.data.herald_events === true,
    };
    res.setHeader("X-Herald-Session-Id", sessionId);
    // A stream's 200 and first chunk wait for the first text: a turn that fails before it answers a
    // real HTTP status, which client libraries raise as their own error type.
    this.pending.set(messageId, pending);
    let keepAlive: NodeJS.Timeout | undefined;
    if (stream) {
      const everyMs = this.config.streamKeepAliveMs ?? 10_000;
      keepAlive = setInterval(() => {
        if (res.writableEnded) return;
        if (!res.headersSent) writeChunk(pending, {}, null, true);
        else res.write(": keep-alive\n\n");
      }, everyMs);
      keepAlive.unref();
    }
    res.on("close", () => {
      clearInterval(keepAlive);
      if (!res.writableFinished) this.pending.delete(messageId);
    });
    if (!this.onMessage) {
      this.pending.delete(messageId);
      failPending(pending, 503, "The gateway is not ready yet; retry shortly.", "unavailable");
      return;
    }
    try {
      const outcome = await this.onMessage(inbound);
      if (outcome !== "accepted" && outcome !== "command" && this.pending.has(messageId)) {
        this.pending.delete(messageId);
        failPending(pending, 400, `The message was not processed (${outcome}).`, "invalid_request_error");
      }
    } catch (err) {
      this.logger.error({ err }, "api inbound failed");
      this.pending.delete(messageId);
      failPending(pending, 500, "The gateway could not record the message; retry.", "server_error");
    }
  }
}

/** Builds the API adapter. */
export function createApiAdapter(config: ApiAdapterConfig, deps: { logger: Logger }): ApiAdapter {
  return new ApiAdapter(config, deps.logger.child({ adapter: "api" }));
}
