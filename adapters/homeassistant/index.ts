/**
 * Home Assistant as a platform: Herald as a conversation agent of Assist. Home Assistant posts each
 * utterance to `/webhooks/homeassistant` (from the Webhook Conversation integration, or a
 * `rest_command`) and gets the spoken answer back in the same HTTP response.
 *
 * Design:
 * - A request is one inbound message, through the gateway like any platform's (access rules,
 *   sessions, commands); its conversation id is the chat, so a conversation is a session.
 * - The reply is one final message: the request waits for the outbox's reply to its message (notices
 *   before it are spoken first) up to `replyTimeoutMs`, then answers that the reply comes later.
 *   No streaming, no buttons: an approval is answered by saying or typing `/approve`.
 * - Secret: `Authorization: Bearer <secret>` or the path `/webhooks/homeassistant/<secret>` (for
 *   callers that cannot set headers), compared in constant time; a wrong one is refused (401) and
 *   logged without the secret.
 * - Messages nobody waits for (a late reply, a scheduled report, `send_message`) go to Home Assistant
 *   as a notification over its REST API (`notify.ts`) when `ha.url` and `ha.token` are set.
 */
import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
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
import { uuidv7 } from "../../core/uuid-v7.js";
import { toSpeech } from "./format.js";
import { notify, targetOf } from "./notify.js";
import { toInbound } from "./parse.js";
import { conversationRequestSchema, type HomeassistantAdapterConfig } from "./types.js";

export type { HomeassistantAdapterConfig } from "./types.js";

/** A request waiting for its reply. */
class Waiting {
  readonly notices: string[] = [];
  reply: OutboundMessage | undefined;
  #wake: (() => void) | undefined;

  add(message: OutboundMessage): void {
    if (message.kind === "notice") this.notices.push(message.text);
    else this.reply ??= message;
    this.#wake?.();
  }

  /** Resolves once `done()` holds, or false after `timeoutMs`. */
  until(done: () => boolean, timeoutMs: number): Promise<boolean> {
    if (done()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#wake = undefined;
        resolve(false);
      }, timeoutMs);
      this.#wake = () => {
        if (!done()) return;
        clearTimeout(timer);
        this.#wake = undefined;
        resolve(true);
      };
    });
  }
}

const json = (status: number, body: object): Response =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

/** The Home Assistant adapter. */
export class HomeassistantAdapter implements PlatformAdapter {
  readonly platform = "homeassistant";
  #onMessage: InboundHandler | undefined;
  readonly #waiting = new Map<string, Waiting>();
  readonly #secret: Buffer;

  constructor(
    private readonly config: HomeassistantAdapterConfig,
    private readonly logger: Logger,
  ) {
    this.#secret = createHash("sha256").update(config.webhookSecret).digest();
  }

  async start(onMessage: InboundHandler): Promise<void> {
    this.#onMessage = onMessage;
  }

  async stop(): Promise<void> {
    this.#onMessage = undefined;
    for (const w of this.#waiting.values())
      w.add({ text: "Herald is restarting; ask again in a moment.", kind: "error", idempotencyKey: "stop" });
    this.#waiting.clear();
  }

  status(): AdapterStatus {
    return { state: this.#onMessage ? "running" : "stopped" };
  }

  /** Serves `POST /webhooks/homeassistant[/<secret>]`: one utterance in, the spoken reply out. */
  async handleWebhook(request: Request): Promise<Response> {
    if (request.method !== "POST") return json(405, { error: "POST a conversation request" });
    if (!this.authorized(request)) {
      this.logger.warn(
        { path: new URL(request.url).pathname.split("/").slice(0, 3).join("/") },
        "home assistant request refused: wrong or missing secret",
      );
      return json(401, {
        error: "wrong or missing secret: send 'Authorization: Bearer <HOMEASSISTANT_WEBHOOK_SECRET>'",
      });
    }
    let body: unknown;
    try {
      body = await request.json();
    } catch {
      this.logger.warn({}, "home assistant request skipped: the body is not JSON");
      return json(400, { error: "the body must be JSON" });
    }
    const parsed = conversationRequestSchema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      this.logger.warn({ field: issue?.path.join(".") }, "home assistant request skipped: malformed");
      return json(400, {
        error: `invalid request: ${issue?.path.join(".") || "body"}: ${issue?.message ?? "invalid"}`,
      });
    }
    const made = toInbound(parsed.data, uuidv7(), randomUUID());
    if ("error" in made) return json(400, { error: made.error });
    return this.converse(made.inbound, made.conversationId);
  }

  async send(chat: ChatRef, message: OutboundMessage, options: SendOptions = {}): Promise<SendResult> {
    const waiting = message.replyToId ? this.#waiting.get(message.replyToId) : undefined;
    if (waiting) {
      waiting.add(message);
      options.onChunkSent?.(0, message.replyToId!);
      return { messageIds: [message.replyToId!] };
    }
    if ((options.fromChunk ?? 0) > 0) return { messageIds: [] };
    const { api } = this.config;
    if (!api)
      throw new PlatformError(
        this.platform,
        "Home Assistant stopped waiting for this message and Herald has no way to send it: set HOMEASSISTANT_URL and HOMEASSISTANT_TOKEN so messages Herald starts arrive as notifications.",
      );
    const id = `herald-${message.idempotencyKey}`;
    await notify(
      api,
      {
        target: targetOf(chat.chatId, this.config.notifyService),
        title: "Herald",
        message: toSpeech(message.text),
        id,
      },
      options.signal,
    );
    options.onChunkSent?.(0, id);
    return { messageIds: [id] };
  }

  onTurnEvent(_chat: ChatRef, event: AdapterTurnEvent): void {
    if (event.type !== "ended" || event.status !== "cancelled") return;
    this.#waiting
      .get(event.replyToId)
      ?.add({ text: "Stopped.", kind: "error", idempotencyKey: `cancelled-${event.replyToId}` });
  }

  private authorized(request: Request): boolean {
    const header = request.headers.get("authorization") ?? "";
    const fromPath = new URL(request.url).pathname.split("/")[3];
    const given = header.startsWith("Bearer ") ? header.slice(7) : (fromPath ?? "");
    if (!given) return false;
    return timingSafeEqual(createHash("sha256").update(given).digest(), this.#secret);
  }

  /** Hands the message to the gateway and waits for what it answers. */
  private async converse(inbound: Parameters<InboundHandler>[0], conversationId: string): Promise<Response> {
    const onMessage = this.#onMessage;
    if (!onMessage) return json(503, { error: "Herald is not ready yet; retry shortly." });
    const waiting = new Waiting();
    this.#waiting.set(inbound.messageId, waiting);
    try {
      const outcome = await onMessage(inbound);
      const answer = (speech: string, status = 200) =>
        json(status, { speech, output: speech, conversation_id: conversationId });
      if (outcome === "unauthorized") {
        this.logger.info({ userId: inbound.sender.id }, "home assistant user not allowed");
        return answer(
          `Herald does not talk to this Home Assistant user (${inbound.sender.id}) yet. Ask the owner to add them.`,
          403,
        );
      }
      if (outcome === "pairing") {
        await waiting.until(() => waiting.notices.length > 0, 5000);
        return answer(toSpeech(waiting.notices.join("\n\n")));
      }
      if (outcome !== "accepted" && outcome !== "command") return answer("", 200);
      const replied = await waiting.until(
        () => waiting.reply !== undefined,
        this.config.replyTimeoutMs ?? 25_000,
      );
      if (!replied) {
        this.#waiting.delete(inbound.messageId);
        const later = this.config.api ? " I'll send the answer as a notification." : "";
        return answer(`This is taking a while.${later}`);
      }
      return answer(toSpeech([...waiting.notices, waiting.reply?.text ?? ""].join("\n\n")));
    } catch (err) {
      this.logger.error({ err }, "home assistant inbound failed");
      return json(500, { error: "Herald could not record the message; retry." });
    } finally {
      this.#waiting.delete(inbound.messageId);
    }
  }
}

/** Builds the Home Assistant adapter. */
export function createHomeassistantAdapter(
  config: HomeassistantAdapterConfig,
  deps: AdapterDeps,
): HomeassistantAdapter {
  return new HomeassistantAdapter(
    { ...config, api: config.api ?? deps.services?.homeAssistantApi },
    deps.logger,
  );
}
