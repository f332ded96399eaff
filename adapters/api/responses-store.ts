/**
 * The stored side of `/v1/responses`: a response is kept (with `store`, the default) from the moment
 * it is created, `in_progress`, and replaced by its final form when its turn ends, until it expires. A
 * reply whose client went away (a dropped connection, a gateway restart during the turn) still
 * completes its stored response, so `GET /v1/responses/{id}` finds the answer later.
 */
import type { Logger } from "../../core/logger.js";
import type { ClientToolCalls, OutboundMessage } from "../../core/types.js";
import type { TokenUsage } from "./respond.js";
import {
  functionCallItem,
  messageItem,
  type ResponseObject,
  type ResponseRequestEcho,
  responseObject,
  responseUsage,
} from "./responses-body.js";

/** One stored response: its JSON body, and the chat and user it belongs to. */
export interface StoredResponse {
  id: string;
  chatId: string;
  userId: string;
  body: string;
  createdAt: number;
  /** Epoch ms after which it is gone. */
  expiresAt: number;
}

/** Where responses are kept (the gateway's state database: `SqliteResponseStore`). */
export interface ResponseStorePort {
  /** Undefined when unknown or expired at `now`. */
  get(id: string, now: number): StoredResponse | undefined;
  put(response: StoredResponse): void;
  /** False when there was none. */
  delete(id: string): boolean;
}

/** What a stored response's body holds: the response, and the client calls it waits for. */
export interface StoredBody {
  response: ResponseObject;
  pending?: ClientToolCalls | undefined;
  /** The request's input items, for `GET /v1/responses/{id}/input_items`. */
  input?: unknown[] | undefined;
}

/** What a response is built from: its ids, its chat and user, and what it echoes of its request. */
export interface ResponseParts {
  id: string;
  itemId: string;
  createdAt: number;
  chatId: string;
  userId: string;
  echo: ResponseRequestEcho;
  /** The request's input items (with ids), kept with every state of the response. */
  input?: unknown[] | undefined;
}

const DAY_MS = 86_400_000;

/** The ids of the response answering inbound message `messageId`, and of its message item. */
export function responseIds(messageId: string): { id: string; itemId: string } {
  const compact = messageId.replaceAll("-", "");
  return { id: `resp_${compact}`, itemId: `msg_${compact}` };
}

/** The output items of a reply: the message (when it has text), then the client's calls. */
export function outputItems(itemId: string, text: string, calls: ClientToolCalls | undefined): unknown[] {
  return [
    ...(text ? [messageItem(itemId, text)] : []),
    ...(calls?.calls ?? []).map((c) => functionCallItem(c)),
  ];
}

/** The stored responses (none kept without a store). */
export class ResponseKeeper {
  constructor(
    private readonly store: ResponseStorePort | undefined,
    readonly ttlMs: number = 30 * DAY_MS,
    private readonly logger: Logger,
  ) {}

  /** Whether responses are kept at all (a store is configured). */
  get enabled(): boolean {
    return this.store !== undefined;
  }

  /** The stored response `id` with its body, unless unknown or expired. */
  read(id: string): { stored: StoredResponse; body: StoredBody } | undefined {
    const stored = this.store?.get(id, Date.now());
    return stored ? { stored, body: JSON.parse(stored.body) as StoredBody } : undefined;
  }

  /** Removes a stored response; false when there was none. */
  delete(id: string): boolean {
    return this.store?.delete(id) ?? false;
  }

  /** Stores `response` (not when its request said `store: false`); a failure is logged. */
  save(parts: ResponseParts, response: ResponseObject, pending?: ClientToolCalls | undefined): void {
    if (!this.store || !parts.echo.store) return;
    const now = Date.now();
    const body: StoredBody = {
      response,
      ...(pending ? { pending } : {}),
      ...(parts.input ? { input: parts.input } : {}),
    };
    try {
      this.store.put({
        id: parts.id,
        chatId: parts.chatId,
        userId: parts.userId,
        body: JSON.stringify(body),
        createdAt: now,
        expiresAt: now + this.ttlMs,
      });
    } catch (err) {
      this.logger.error({ err, responseId: parts.id }, "response not stored");
    }
  }

  /**
   * Completes the stored in-progress response of inbound message `messageId`, whose request is no
   * longer waiting: with the reply, or failed (`message.kind` "error", or `cancelled`). Nothing when
   * it was not stored or is already final.
   */
  settle(messageId: string, outcome: OutboundMessage | "cancelled", usage: TokenUsage | undefined): void {
    if (!this.store || (outcome !== "cancelled" && outcome.kind === "notice")) return;
    const found = this.read(responseIds(messageId).id);
    const status = found?.body.response.status;
    if (!found || (status !== "in_progress" && status !== "queued")) return;
    const { stored, body } = found;
    const parts: ResponseParts = {
      ...responseIds(messageId),
      createdAt: body.response.created_at,
      chatId: stored.chatId,
      userId: stored.userId,
      echo: echoOfResponse(body.response),
      input: body.input,
    };
    if (outcome === "cancelled" && parts.echo.background) {
      this.save(parts, responseObject({ ...parts, status: "cancelled", output: [] }, parts.echo));
      return;
    }
    if (outcome === "cancelled" || outcome.kind === "error") {
      const message = outcome === "cancelled" ? "The turn was cancelled." : outcome.text;
      const code = outcome === "cancelled" ? "cancelled" : (outcome.failure?.code ?? "turn_failed");
      this.save(parts, failedResponse(parts, code, message));
      return;
    }
    const output = outputItems(parts.itemId, outcome.text, outcome.clientCalls);
    const response = responseObject(
      { id: parts.id, createdAt: parts.createdAt, status: "completed", output, usage: responseUsage(usage) },
      parts.echo,
    );
    this.save(parts, response, outcome.clientCalls);
  }
}

/** A failed response with its error. */
export function failedResponse(parts: ResponseParts, code: string, message: string): ResponseObject {
  return responseObject(
    { id: parts.id, createdAt: parts.createdAt, status: "failed", output: [], error: { code, message } },
    parts.echo,
  );
}

/** What a stored response echoes of its request. */
export function echoOfResponse(r: ResponseObject): ResponseRequestEcho {
  return {
    model: r.model,
    instructions: r.instructions,
    previousResponseId: r.previous_response_id,
    store: r.store,
    tools: r.tools,
    metadata: r.metadata,
    user: r.user ?? undefined,
    background: r.background,
  };
}
