/**
 * `POST /webhooks/in/<name>`: reads the body up to the route's cap (413 past it), verifies it (401,
 * logging the reason and never the body), parses it as JSON (400), fills the prompt and hands it to the
 * injected `submit`, which rejects a replayed delivery (409: the same signed timestamp and body, or the
 * same delivery id). A route starts at most `max_per_minute`
 * turns a minute (429 with Retry-After past it).
 */
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../../core/logger.js";
import { fillPrompt } from "./template.js";
import type { ResolvedWebhook, WebhookDelivery, WebhookNodeRoute, WebhookSubmit } from "./types.js";
import { verifyDelivery } from "./verify.js";

/** What the route needs. */
export interface InboundWebhookOptions {
  routes: readonly ResolvedWebhook[];
  submit: WebhookSubmit;
  logger: Logger;
  /** @defaultValue Date.now */
  now?: (() => number) | undefined;
}

const PREFIX = "/webhooks/in/";

function reply(res: ServerResponse, status: number, body: object): void {
  const data = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(data) });
  res.end(data);
}

/** Reads the body, or undefined once it passes `maxBytes` (the rest is not read). */
async function readCapped(req: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** The route on Node's request/response; answers only paths under `/webhooks/in/`. */
export function createInboundWebhookRoute(options: InboundWebhookOptions): WebhookNodeRoute {
  const log = options.logger.child({ component: "webhooks" });
  const now = options.now ?? Date.now;
  const byName = new Map(options.routes.map((r) => [r.name, r]));
  // Accepted turns of the last minute, per route (timestamps, oldest first).
  const recent = new Map<string, number[]>();
  return {
    async handleHttp(req, res, path) {
      if (!path.startsWith(PREFIX)) return false;
      const name = path.slice(PREFIX.length);
      const route = byName.get(name);
      if (!route) {
        reply(res, 404, { error: "no such webhook" });
        return true;
      }
      if (req.method !== "POST") {
        res.setHeader("allow", "POST");
        reply(res, 405, { error: "use POST" });
        return true;
      }
      const body = await readCapped(req, route.maxBodyBytes);
      if (!body) {
        log.warn({ webhook: name, maxBodyBytes: route.maxBodyBytes }, "webhook body too large");
        // Stop reading: the connection closes after the answer.
        res.setHeader("connection", "close");
        reply(res, 413, { error: `body larger than ${route.maxBodyBytes} bytes` });
        req.resume();
        return true;
      }
      const header = (h: string) => {
        const v = req.headers[h];
        return Array.isArray(v) ? v[0] : v;
      };
      const failure = verifyDelivery(route, header, body, now());
      if (failure) {
        log.warn({ webhook: name, reason: failure }, "webhook refused");
        reply(res, 401, {
          error: failure === "stale_timestamp" ? "timestamp outside the window" : "unauthorized",
        });
        return true;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(body.toString("utf8"));
      } catch {
        reply(res, 400, { error: "the body is not JSON" });
        return true;
      }
      // The replay record is what the signature covers, the signed timestamp and the body: the same body
      // signed again later is a new delivery, the same one resent is a replay whatever id it names (the
      // id header is not signed). The id, when the route names one, is recorded too: a sender's retry.
      const signedAt =
        route.auth.type === "hmac" && route.auth.timestampHeader ? header(route.auth.timestampHeader) : "";
      const delivery: WebhookDelivery = {
        bodyKey: createHash("sha256")
          .update(`${signedAt ?? ""}.`)
          .update(body)
          .digest("hex"),
        id: (route.idHeader && header(route.idHeader)?.trim()) || undefined,
      };
      const at = now();
      const window = (recent.get(name) ?? []).filter((t) => at - t < 60_000);
      recent.set(name, window);
      if (window.length >= route.maxPerMinute) {
        const retryS = Math.max(1, Math.ceil((window[0]! + 60_000 - at) / 1000));
        log.warn({ webhook: name, maxPerMinute: route.maxPerMinute }, "webhook rate limit reached");
        res.setHeader("retry-after", String(retryS));
        reply(res, 429, {
          error: `more than ${route.maxPerMinute} deliveries a minute; retry in ${retryS} s`,
        });
        return true;
      }
      const outcome = options.submit(route, delivery, fillPrompt(name, route.prompt, parsed));
      if (outcome.kind === "accepted") window.push(at);
      switch (outcome.kind) {
        case "accepted":
          log.info({ webhook: name, turnId: outcome.turnId }, "webhook accepted");
          reply(res, 202, { accepted: true, turn_id: outcome.turnId });
          return true;
        case "duplicate":
          log.warn({ webhook: name, by: outcome.by }, "webhook replay refused");
          reply(res, 409, {
            error:
              outcome.by === "id"
                ? "this delivery id was already received"
                : "this body (with its signed timestamp) was already received; a sender that sends the same body as a new event must sign a timestamp (timestamp_header)",
          });
          return true;
        case "undeliverable":
          log.warn({ webhook: name, reason: outcome.reason }, "webhook has no reachable target");
          reply(res, 503, { error: outcome.reason });
          return true;
      }
    },
  };
}
