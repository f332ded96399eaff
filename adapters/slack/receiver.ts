/**
 * Bolt receivers for Herald. Both transports hand events to bolt's `App.processEvent` and acknowledge
 * them to Slack only once the listeners are done (the message is recorded in the inbound ledger) or
 * when the ack deadline passes, whichever comes first: Slack retries events not acknowledged within
 * 3 s, and an event whose recording failed is left unacknowledged so that Slack delivers it again.
 *
 * `WebhookReceiver` serves HTTP events on the gateway's own server (`/webhooks/slack`), verifying them
 * with bolt's `verifySlackRequest` (signature and the 5-minute timestamp window).
 */
import type { App, Receiver, ReceiverEvent } from "@slack/bolt";
import { verifySlackRequest } from "@slack/bolt";
import { describeError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";

/** An event body as Slack sent it, before bolt reads it. */
export type EventBody = Record<string, unknown>;

/**
 * Runs `body` through bolt. Resolves `true` when the listeners finished, or at `deadlineMs` while they
 * still run (the work goes on); `false` when processing failed first (leave the event unacknowledged).
 * Never rejects: a failure after the deadline is logged.
 */
export function dispatchEvent(
  app: App,
  input: { body: EventBody; retryNum?: number | undefined; retryReason?: string | undefined },
  deadlineMs: number,
  logger: Logger,
): Promise<boolean> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (value: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(value);
    };
    const timer = setTimeout(() => {
      logger.warn({ deadlineMs }, "slack event still processing at the ack deadline; acknowledging it now");
      settle(true);
    }, deadlineMs);
    const event: ReceiverEvent = {
      body: input.body,
      retryNum: input.retryNum,
      retryReason: input.retryReason,
      // Bolt acks events before running listeners; the transport acks instead once they are done.
      ack: async () => {},
    };
    app.processEvent(event).then(
      () => settle(true),
      (err: unknown) => {
        const acked = settled;
        logger.error(
          { error: describeError(err), acknowledged: acked },
          acked
            ? "slack event failed after it was acknowledged"
            : "slack event failed; left unacknowledged so Slack retries it",
        );
        settle(false);
      },
    );
  });
}

export interface WebhookReceiverOptions {
  signingSecret: string;
  ackDeadlineMs: number;
  logger: Logger;
  /** @defaultValue 1 MiB (Slack event bodies are a few KiB) */
  maxBodyBytes?: number;
}

const text = (status: number, body: string) =>
  new Response(body, { status, headers: { "content-type": "text/plain; charset=utf-8" } });

/** HTTP Events API transport. `init` by bolt; `handle` by the adapter's `handleWebhook`. */
export class WebhookReceiver implements Receiver {
  private app: App | undefined;
  private running = false;

  constructor(private readonly options: WebhookReceiverOptions) {}

  init(app: App): void {
    this.app = app;
  }

  async start(): Promise<void> {
    this.running = true;
  }

  async stop(): Promise<void> {
    this.running = false;
  }

  /** Verifies and processes one request. Never throws. */
  async handle(request: Request): Promise<Response> {
    const log = this.options.logger;
    if (request.method !== "POST") return text(405, "Slack events are POSTed.");
    const raw = await readBody(request, this.options.maxBodyBytes ?? 1024 * 1024);
    if (raw === undefined) return text(413, "Body too large.");
    try {
      verifySlackRequest({
        signingSecret: this.options.signingSecret,
        body: raw,
        headers: {
          "x-slack-signature": request.headers.get("x-slack-signature") ?? "",
          "x-slack-request-timestamp": Number(request.headers.get("x-slack-request-timestamp")),
        },
      });
    } catch (err) {
      log.warn(
        { reason: describeError(err) },
        "slack webhook request refused: signature or timestamp invalid",
      );
      return text(401, "Invalid Slack signature.");
    }
    const body = parseBody(raw, request.headers.get("content-type") ?? "");
    if (!body) {
      log.warn({ bytes: raw.length }, "slack webhook body is not JSON; skipped");
      return text(400, "Malformed body.");
    }
    if (body["ssl_check"]) return text(200, "");
    if (body["type"] === "url_verification") {
      return Response.json({ challenge: String(body["challenge"] ?? "") });
    }
    if (!this.app || !this.running) return text(503, "Herald's Slack adapter is not running.");
    const retryNum = Number(request.headers.get("x-slack-retry-num") ?? Number.NaN);
    const ok = await dispatchEvent(
      this.app,
      {
        body,
        retryNum: Number.isFinite(retryNum) ? retryNum : undefined,
        retryReason: request.headers.get("x-slack-retry-reason") ?? undefined,
      },
      this.options.ackDeadlineMs,
      log,
    );
    return ok ? text(200, "") : text(500, "Could not record the event; Slack will retry.");
  }
}

async function readBody(request: Request, maxBytes: number): Promise<string | undefined> {
  const declared = Number(request.headers.get("content-length") ?? 0);
  if (declared > maxBytes) return undefined;
  const buf = await request.arrayBuffer();
  if (buf.byteLength > maxBytes) return undefined;
  return new TextDecoder().decode(buf);
}

function parseBody(raw: string, contentType: string): EventBody | undefined {
  try {
    if (contentType.includes("application/x-www-form-urlencoded")) {
      const form = new URLSearchParams(raw);
      const payload = form.get("payload");
      if (payload) return JSON.parse(payload) as EventBody;
      return Object.fromEntries(form.entries());
    }
    const parsed: unknown = JSON.parse(raw);
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as EventBody) : undefined;
  } catch {
    return undefined;
  }
}
