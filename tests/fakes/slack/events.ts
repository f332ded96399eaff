/**
 * Slack's side of the Events API for tests: real-shaped event envelopes built from the fixtures in
 * `tests/fixtures/slack/`, and HTTP requests signed the way Slack signs them
 * (`v0=` + hex HMAC-SHA256 of `v0:<timestamp>:<body>` with the signing secret).
 */
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "../../fixtures/slack");

type Json = Record<string, unknown>;

/** A fixture file (`message-im`, `app-mention`…), parsed afresh on every call. */
export function loadFixture(name: string): Json {
  return JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), "utf8")) as Json;
}

let eventSeq = 0;

/** Wraps an event in an `event_callback` envelope shaped like the `message-im` fixture. */
export function eventCallback(event: Json, options: { eventId?: string } = {}): Json {
  const envelope = loadFixture("message-im");
  eventSeq += 1;
  return {
    ...envelope,
    event,
    event_id: options.eventId ?? `Ev0TEST${String(eventSeq).padStart(5, "0")}`,
    event_time: Math.floor(Number(event["ts"] ?? 1_700_000_000)),
  };
}

/**
 * A user's `message` event (a copy of the `message-im` fixture's event with the given fields).
 * `channelType: null` leaves `channel_type` out.
 */
export function messageEvent(fields: {
  channel: string;
  ts: string;
  text: string;
  user?: string;
  threadTs?: string;
  channelType?: string | null;
  type?: "message" | "app_mention";
  subtype?: string;
  botId?: string;
  files?: object[];
}): Json {
  const base = (loadFixture("message-im")["event"] ?? {}) as Json;
  const event: Json = {
    ...base,
    type: fields.type ?? "message",
    user: fields.user ?? "U0ALICE01",
    channel: fields.channel,
    ts: fields.ts,
    event_ts: fields.ts,
    text: fields.text,
    blocks: [],
  };
  const channelType =
    fields.channelType === undefined
      ? fields.channel.startsWith("D")
        ? "im"
        : "channel"
      : fields.channelType;
  if (channelType === null || fields.type === "app_mention") delete event["channel_type"];
  else event["channel_type"] = channelType;
  if (fields.threadTs) event["thread_ts"] = fields.threadTs;
  if (fields.subtype) event["subtype"] = fields.subtype;
  if (fields.botId) event["bot_id"] = fields.botId;
  if (fields.files) event["files"] = fields.files;
  return event;
}

/**
 * A POST to the gateway's Slack webhook, signed like Slack signs it.
 * @param options.timestampSec @defaultValue now
 * @param options.secret signs with this secret (a wrong one makes a bad signature)
 * @param options.retryNum sets `X-Slack-Retry-Num` / `X-Slack-Retry-Reason` like a Slack redelivery
 */
export function signedRequest(
  body: Json | string,
  options: { secret: string; timestampSec?: number; retryNum?: number; url?: string; signature?: string },
): Request {
  const raw = typeof body === "string" ? body : JSON.stringify(body);
  const ts = options.timestampSec ?? Math.floor(Date.now() / 1000);
  const signature =
    options.signature ?? `v0=${createHmac("sha256", options.secret).update(`v0:${ts}:${raw}`).digest("hex")}`;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "x-slack-request-timestamp": String(ts),
    "x-slack-signature": signature,
    "user-agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
  };
  if (options.retryNum !== undefined) {
    headers["x-slack-retry-num"] = String(options.retryNum);
    headers["x-slack-retry-reason"] = "http_timeout";
  }
  return new Request(options.url ?? "http://127.0.0.1/webhooks/slack/events", {
    method: "POST",
    headers,
    body: raw,
  });
}

let actionSeq = 0;

/**
 * The `block_actions` payload Slack sends when `user` clicks the button labelled `label` of the bot's
 * `message` (as the fake recorded it). @throws when the message has no such button
 */
export function blockActionsPayload(
  message: { channel: string; ts: string; threadTs?: string | undefined; text: string; blocks: Json[] },
  label: string,
  user = "U0ALICE01",
): Json {
  const buttons = message.blocks
    .filter((b) => b["type"] === "actions")
    .flatMap((b) => (b["elements"] as Json[]).map((e) => ({ block: b, element: e })));
  const hit = buttons.find((b) => (b.element["text"] as Json | undefined)?.["text"] === label);
  if (!hit) throw new Error(`fake slack: no button "${label}" on message ${message.ts}`);
  actionSeq += 1;
  return {
    type: "block_actions",
    user: { id: user, username: user.toLowerCase(), name: user.toLowerCase(), team_id: "T0FAKE001" },
    api_app_id: "A0FAKE001",
    token: "scrubbed-verification-token",
    container: { type: "message", message_ts: message.ts, channel_id: message.channel, is_ephemeral: false },
    trigger_id: `1700000000.${actionSeq}.fake`,
    team: { id: "T0FAKE001", domain: "fake" },
    enterprise: null,
    is_enterprise_install: false,
    channel: { id: message.channel, name: message.channel.toLowerCase() },
    message: {
      type: "message",
      user: "UHERALD01",
      bot_id: "BHERALD01",
      text: message.text,
      ts: message.ts,
      blocks: message.blocks,
      ...(message.threadTs ? { thread_ts: message.threadTs } : {}),
    },
    state: { values: {} },
    response_url: "https://hooks.slack.com/actions/T0FAKE001/1/scrubbed",
    actions: [
      {
        ...hit.element,
        block_id: hit.block["block_id"],
        action_ts: `${1_700_000_900 + actionSeq}.${String(actionSeq).padStart(6, "0")}`,
      },
    ],
  };
}

/** An interactivity POST (form-encoded `payload=<json>`), signed like Slack signs it. */
export function signedInteraction(payload: Json, options: { secret: string; url: string }): Request {
  const raw = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const request = signedRequest(raw, options);
  const headers = new Headers(request.headers);
  headers.set("content-type", "application/x-www-form-urlencoded");
  return new Request(request.url, { method: "POST", headers, body: raw });
}
