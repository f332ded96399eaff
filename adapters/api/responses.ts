/**
 * OpenAI's Responses API on the API server: `POST /v1/responses` (streamed, not, or in the
 * background), `GET` and `DELETE /v1/responses/{id}`, `POST /v1/responses/{id}/cancel`
 * (responses-cancel.ts) and `GET /v1/responses/{id}/input_items` (responses-items.ts). A request is one inbound message of the
 * `api` platform, like a chat completion: its reply comes through the outbox and completes the HTTP
 * answer. A new conversation is a new Herald session; `previous_response_id` continues the session of
 * that stored response (the model sees everything before). Function tools the client declares are the
 * client's own: a step that calls one ends the turn, the response carries the calls as `function_call`
 * items, and the client's `function_call_output` items on the next request carry the turn on; Herald's
 * own tools run on the gateway as ever. With `store` (the default) the response is kept in the state
 * database until it expires (API_SERVER_RESPONSES_TTL_DAYS), for GET and for continuing. With
 * `background`, the request is answered `queued` at once and the turn's reply completes the stored
 * response, as a reply whose client went away does.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../../core/logger.js";
import type {
  AdapterTurnEvent,
  ClientToolCalls,
  InboundMessage,
  InboundOutcome,
  OutboundMessage,
} from "../../core/types.js";
import { uuidv7 } from "../../core/uuid-v7.js";
import { failureStatus, type TokenUsage, writeError, writeJson } from "./respond.js";
import { type ResponseObject, responseObject, responseUsage } from "./responses-body.js";
import { cancelResponse } from "./responses-cancel.js";
import { inputItemsOf, inputItemsPage } from "./responses-items.js";
import {
  badRequest,
  checkOutputs,
  clientToolsOf,
  echoOf,
  InputProblem,
  type ResponsesTurn,
  readRequest,
  turnOf,
} from "./responses-parse.js";
import {
  failedResponse,
  outputItems,
  ResponseKeeper,
  type ResponseParts,
  type ResponseStorePort,
  responseIds,
  type StoredResponse,
} from "./responses-store.js";
import { ResponseEvents } from "./responses-stream.js";

export type { ResponseStorePort, StoredResponse } from "./responses-store.js";

/** What the Responses routes need of the adapter and the gateway. */
export interface ResponsesOptions {
  /** Unset: nothing is stored (GET answers 404, `previous_response_id` is refused). */
  store?: ResponseStorePort | undefined;
  /** How long a stored response lives. @defaultValue 30 days */
  ttlMs?: number | undefined;
  /** See `ApiAdapterConfig.streamKeepAliveMs`. @defaultValue 10_000 */
  keepAliveMs?: number | undefined;
  usageOf?: ((messageId: string) => TokenUsage | undefined) | undefined;
  /** Hands an inbound message to the gateway; undefined while the adapter is not started. */
  submit(message: InboundMessage): Promise<InboundOutcome> | undefined;
  logger: Logger;
}

/** A request waiting for its reply. */
interface Pending extends ResponseParts {
  res: ServerResponse;
  messageId: string;
  notices: string[];
  /** The notices written before the first text of a stream. */
  prefix: string;
  events?: ResponseEvents | undefined;
}

const RESPONSE_PATH = /^\/v1\/responses\/([A-Za-z0-9_-]{1,200})(?:\/(cancel|input_items))?$/;

/** The Responses routes and their requests in flight. */
export class ResponsesApi {
  private readonly pending = new Map<string, Pending>();
  private readonly kept: ResponseKeeper;

  constructor(private readonly o: ResponsesOptions) {
    this.kept = new ResponseKeeper(o.store, o.ttlMs, o.logger);
  }

  /** True when the reply to inbound message `messageId` answers a Responses request. */
  owns(messageId: string): boolean {
    return this.pending.has(messageId);
  }

  /** Serves `/v1/responses[/{id}]`; false for other paths. */
  async handleHttp(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
    if (path === "/v1/responses" && req.method === "POST") {
      await this.create(req, res);
      return true;
    }
    const [, id, sub] = RESPONSE_PATH.exec(path) ?? [];
    const method = sub === "cancel" ? "POST" : sub === "input_items" ? "GET" : undefined;
    if (!id || (method ? req.method !== method : req.method !== "GET" && req.method !== "DELETE"))
      return false;
    const found = this.kept.read(id);
    if (!found) {
      const days = Math.round(this.kept.ttlMs / 86_400_000);
      writeError(
        res,
        404,
        `No response with id '${id}': it was not stored (store: false), was deleted, or expired after ${days} days.`,
        "invalid_request_error",
        { code: "not_found" },
      );
    } else if (sub === "cancel") cancelResponse(res, found, this.kept, this.o);
    else if (sub === "input_items") {
      const query = new URL(req.url ?? "/", "http://localhost").searchParams;
      const listed = inputItemsPage(found.body.input ?? [], query);
      if ("page" in listed) writeJson(res, 200, listed.page);
      else badRequest(res, new InputProblem(listed.param, listed.problem));
    } else if (req.method === "DELETE") {
      this.kept.delete(id);
      writeJson(res, 200, { id, object: "response.deleted", deleted: true });
    } else writeJson(res, 200, found.body.response);
    return true;
  }

  /**
   * Completes the request `messageId` with the gateway's reply (buttons already as text), or, when no
   * request waits for it (gone, or from before a restart), its stored response.
   */
  send(messageId: string, message: OutboundMessage): void {
    const p = this.pending.get(messageId);
    if (!p) {
      this.kept.settle(messageId, message, this.o.usageOf?.(messageId));
      return;
    }
    if (message.kind === "notice") {
      p.notices.push(message.text);
      return;
    }
    this.pending.delete(messageId);
    if (message.kind === "error") {
      const { status, type, code, retry } = failureStatus(message.failure?.code);
      this.fail(p, status, message.text, type, { code, retryAfterMs: message.failure?.retryAfterMs, retry });
      return;
    }
    const calls = message.clientCalls?.calls ?? [];
    const usage = responseUsage(this.o.usageOf?.(messageId));
    const build = (output: unknown[]) => {
      const response = responseObject(
        { id: p.id, createdAt: p.createdAt, status: "completed", output, usage },
        p.echo,
      );
      // Stored before the client reads it: its next request may continue it at once.
      this.kept.save(p, response, message.clientCalls);
      return response;
    };
    if (p.events) {
      p.events.start(this.snapshot(p));
      p.events.complete(p.prefix + [...p.notices, message.text].join("\n\n"), calls, build);
      return;
    }
    const text = [...p.notices, message.text].join("\n\n");
    writeJson(p.res, 200, build(outputItems(p.itemId, text, message.clientCalls)));
  }

  /** Streams text as it is written; a cancelled turn ends the request. */
  onTurnEvent(event: AdapterTurnEvent): void {
    const p = this.pending.get(event.replyToId);
    if (!p) {
      if (event.type === "ended" && event.status === "cancelled")
        this.kept.settle(event.replyToId, "cancelled", undefined);
      return;
    }
    if (event.type === "delta" && p.events) {
      if (!p.events.started) p.events.start(this.snapshot(p));
      if (!p.events.written && p.notices.length) {
        p.prefix = `${p.notices.join("\n\n")}\n\n`;
        p.notices = [];
        p.events.delta(p.prefix);
      }
      p.events.delta(event.text);
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

  /** Ends every request in flight (the gateway stops). */
  stop(): void {
    // Their turns run again after the next start, and complete the stored responses then.
    for (const p of this.pending.values())
      this.fail(p, 503, "The gateway is shutting down; retry shortly.", "unavailable", { keep: false });
    this.pending.clear();
  }

  private async create(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const parsed = await readRequest(req);
    if ("problem" in parsed) {
      badRequest(res, parsed.problem);
      return;
    }
    const body = parsed.body;
    const user = body.user ?? "api";
    let previous: { stored: StoredResponse; pending?: ClientToolCalls | undefined } | undefined;
    let turn: ResponsesTurn;
    let clientTools: ReturnType<typeof clientToolsOf>;
    try {
      if (body.previous_response_id) previous = this.previous(body.previous_response_id, user);
      clientTools = clientToolsOf(body.tools);
      turn = turnOf(body.input, previous !== undefined);
      if (previous) checkOutputs(turn, previous.pending);
    } catch (err) {
      if (!(err instanceof InputProblem)) throw err;
      badRequest(res, err);
      return;
    }
    const messageId = uuidv7();
    const chatId = previous?.stored.chatId ?? randomUUID();
    const step = previous ? previous.pending?.step : turn.step;
    const stream = body.stream === true;
    if (body.background && (body.store === false || stream || !this.kept.enabled)) {
      const param = stream ? "stream" : "store";
      const why = stream
        ? "'background' with 'stream' is not supported: create it in the background, then poll GET /v1/responses/{id}."
        : "'background' needs 'store': a background response is read back with GET /v1/responses/{id}.";
      badRequest(res, new InputProblem(param, why));
      return;
    }
    const inbound: InboundMessage = {
      platform: "api",
      messageId,
      chat: { platform: "api", chatId },
      chatType: "dm",
      sender: { id: user },
      text: turn.text,
      mentioned: true,
      ...(turn.context.length ? { context: turn.context } : {}),
      ...(stream ? { streamReply: true } : {}),
      ...(clientTools.length ? { clientTools } : {}),
      ...(step && turn.outputs.length
        ? { clientResults: { step, outputs: turn.outputs.map(({ callId, output }) => ({ callId, output })) } }
        : {}),
      ...(body.instructions ? { instructions: body.instructions } : {}),
    };
    const ids = responseIds(messageId);
    const p: Pending = {
      res,
      ...ids,
      messageId,
      createdAt: Math.floor(Date.now() / 1000),
      chatId,
      userId: user,
      echo: echoOf(body),
      input: inputItemsOf(body.input, ids.itemId),
      notices: [],
      prefix: "",
      ...(stream ? { events: new ResponseEvents(res, ids.itemId) } : {}),
    };
    res.setHeader("X-Herald-Session-Id", chatId);
    // Kept from the start: GET finds it in progress, and a reply whose client went away completes it.
    this.kept.save(p, this.snapshot(p));
    if (body.background) await this.runInBackground(p, inbound);
    else await this.run(p, inbound);
  }

  /** Hands the turn to the gateway and follows the request until its reply or failure. */
  private async run(p: Pending, inbound: InboundMessage): Promise<void> {
    const { res, messageId } = p;
    this.pending.set(messageId, p);
    let keepAlive: NodeJS.Timeout | undefined;
    if (p.events) {
      const events = p.events;
      // The 200 waits for the first text (a turn failing before it answers a real HTTP status), or this.
      keepAlive = setInterval(() => {
        if (!events.started) events.start(this.snapshot(p));
        else events.keepAlive();
      }, this.o.keepAliveMs ?? 10_000);
      keepAlive.unref();
    }
    res.on("close", () => {
      clearInterval(keepAlive);
      if (!res.writableFinished) this.pending.delete(messageId);
    });
    const submitted = this.o.submit(inbound);
    if (!submitted) {
      this.pending.delete(messageId);
      this.fail(p, 503, "The gateway is not ready yet; retry shortly.", "unavailable");
      return;
    }
    try {
      const outcome = await submitted;
      if (outcome !== "accepted" && outcome !== "command" && this.pending.has(messageId)) {
        this.pending.delete(messageId);
        this.fail(p, 400, `The message was not processed (${outcome}).`, "invalid_request_error");
      }
    } catch (err) {
      this.o.logger.error({ err }, "api inbound failed");
      this.pending.delete(messageId);
      this.fail(p, 500, "The gateway could not record the message; retry.", "server_error");
    }
  }

  /**
   * Answers `queued` at once and leaves the turn to complete the stored response (its reply finds no
   * request waiting: `send` settles the stored one). A turn the gateway refuses fails it.
   */
  private async runInBackground(p: Pending, inbound: InboundMessage): Promise<void> {
    writeJson(p.res, 200, { ...this.snapshot(p), status: "queued" });
    const failed = (message: string) => this.kept.save(p, failedResponse(p, "server_error", message));
    try {
      const outcome = await this.o.submit(inbound);
      if (outcome === undefined) failed("The gateway is not ready yet; retry shortly.");
      else if (outcome !== "accepted" && outcome !== "command")
        failed(`The message was not processed (${outcome}).`);
    } catch (err) {
      this.o.logger.error({ err }, "api inbound failed");
      failed("The gateway could not record the message; retry.");
    }
  }

  /** The stored response `id` continues, with the calls it waits for. @throws InputProblem when unknown */
  private previous(id: string, user: string) {
    const found = this.kept.read(id);
    // Another user's response is as unknown as one that never was.
    if (!found || found.stored.userId !== user)
      throw new InputProblem(
        "previous_response_id",
        `Previous response with id '${id}' not found: it was not stored (store: false), was deleted, or expired.`,
      );
    return { stored: found.stored, pending: found.body.pending };
  }

  private snapshot(p: Pending): ResponseObject {
    return responseObject({ id: p.id, createdAt: p.createdAt, status: "in_progress", output: [] }, p.echo);
  }

  /**
   * Ends a request with an error: an HTTP status and OpenAI's `{error}` body, or, on a stream whose 200
   * is out, `response.failed` (the response with its error, stored like any) and an `error` event.
   */
  private fail(
    p: Pending,
    status: number,
    message: string,
    type: string,
    options: { code?: string; retryAfterMs?: number | undefined; retry?: boolean; keep?: boolean } = {},
  ): void {
    if (p.res.writableEnded) return;
    const code = options.code ?? type;
    const failed = failedResponse(p, code, message);
    // The stored response says what the client was told (unless the turn goes on after a restart).
    if (options.keep !== false) this.kept.save(p, failed);
    if (p.events?.started) {
      p.events.fail(failed, code, message);
      return;
    }
    writeError(p.res, status, message, type, options);
  }
}
