/**
 * A fake Twilio on 127.0.0.1: the REST API Herald uses (`GET /2010-04-01/Accounts/{sid}.json`,
 * `POST …/Messages.json` as a form, `GET …/Messages/{sid}/Media/{sid}` for MMS media), all behind HTTP
 * basic auth with the account SID and auth token, with Twilio's error bodies (20003 auth, 21211 invalid
 * number, 21610 unsubscribed recipient, 429). It delivers incoming messages to Herald as Twilio does: a
 * form POST signed (`X-Twilio-Signature`, by the SDK's own `getExpectedTwilioSignature`) over the
 * public webhook URL. Faults queue per route.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import twilio from "twilio";

export const ACCOUNT_SID = `AC${"f".repeat(32)}`;
export const AUTH_TOKEN = "fake-twilio-auth-token-0042";
export const FROM_NUMBER = "+15550000001";
export const PUBLIC_WEBHOOK = "https://herald.example.com/webhooks/sms";

/** A message the bot sent, as the fake keeps it. */
export interface TwilioSent {
  sid: string;
  to: string;
  from: string;
  body: string;
  mediaUrl: string[];
}

export interface TwilioFault {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface FakeTwilio {
  url: string;
  /** Where Herald's webhook really listens (the fake signs over `PUBLIC_WEBHOOK`). */
  webhookUrl: string;
  readonly sent: TwilioSent[];
  readonly calls: { method: string; path: string; auth: string | undefined }[];
  /** Numbers Twilio refuses with 21610 (they replied STOP to Twilio itself). */
  readonly unsubscribed: Set<string>;
  sentTo(number: string): TwilioSent[];
  /** Answers the next call of `route` (`messages`, `account`, `media`) with the fault. */
  fault(route: string, fault: TwilioFault): void;
  /**
   * An incoming SMS (or MMS with `media`) from `from` to `to` (default FROM_NUMBER); resolves to
   * Herald's answer. `at`: another number's webhook (default `webhookUrl`, signed over PUBLIC_WEBHOOK).
   */
  sms(input: {
    from: string;
    body: string;
    media?: { bytes: Buffer; mimeType: string }[];
    sid?: string;
    to?: string;
    at?: TwilioWebhook;
  }): Promise<TwilioDelivery>;
  /** Posts `params` to the webhook (or `at`), signed unless `signature` is given. */
  deliver(params: Record<string, string>, signature?: string, at?: TwilioWebhook): Promise<TwilioDelivery>;
  close(): Promise<void>;
}

/** A number's webhook: where the request really goes, and the public URL it is signed over. */
export interface TwilioWebhook {
  url: string;
  publicUrl: string;
}

export interface TwilioDelivery {
  status: number;
  body: string;
  params: Record<string, string>;
}

const sid = (prefix: string) => `${prefix}${randomBytes(16).toString("hex")}`;

export async function startFakeTwilio(): Promise<FakeTwilio> {
  const faults = new Map<string, TwilioFault[]>();
  const media = new Map<string, { bytes: Buffer; mimeType: string }>();
  const base = `/2010-04-01/Accounts/${ACCOUNT_SID}`;

  const fake: FakeTwilio = {
    url: "",
    webhookUrl: "",
    sent: [],
    calls: [],
    unsubscribed: new Set(),
    sentTo: (number) => fake.sent.filter((m) => m.to === number),
    fault(route, f) {
      faults.set(route, [...(faults.get(route) ?? []), f]);
    },
    sms({ from, body, media: items = [], sid: given, to = FROM_NUMBER, at }) {
      const messageSid = given ?? sid(items.length ? "MM" : "SM");
      const params: Record<string, string> = {
        ToCountry: "US",
        SmsMessageSid: messageSid,
        NumMedia: String(items.length),
        SmsSid: messageSid,
        SmsStatus: "received",
        Body: body,
        To: to,
        NumSegments: "1",
        MessageSid: messageSid,
        AccountSid: ACCOUNT_SID,
        From: from,
        ApiVersion: "2010-04-01",
      };
      items.forEach((item, i) => {
        const id = sid("ME");
        media.set(id, item);
        params[`MediaUrl${i}`] = `${fake.url}${base}/Messages/${messageSid}/Media/${id}`;
        params[`MediaContentType${i}`] = item.mimeType;
      });
      return fake.deliver(params, undefined, at);
    },
    async deliver(params, signature, at) {
      const publicUrl = at?.publicUrl ?? PUBLIC_WEBHOOK;
      const signed = signature ?? twilio.getExpectedTwilioSignature(AUTH_TOKEN, publicUrl, params);
      const res = await fetch(at?.url ?? fake.webhookUrl, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signed },
        body: new URLSearchParams(params).toString(),
      });
      return { status: res.status, body: await res.text(), params };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };

  const error = (res: ServerResponse, status: number, code: number, message: string) =>
    json(res, status, { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status });

  function createMessage(form: URLSearchParams, res: ServerResponse) {
    const to = form.get("To") ?? "";
    if (!/^\+\d{6,15}$/.test(to))
      return error(res, 400, 21211, `The 'To' number ${to} is not a valid phone number.`);
    if (fake.unsubscribed.has(to)) return error(res, 400, 21610, "Attempt to send to unsubscribed recipient");
    const body = form.get("Body") ?? "";
    const mediaUrl = form.getAll("MediaUrl");
    if (!body && mediaUrl.length === 0)
      return error(res, 400, 21619, "A text message body or media urls must be specified.");
    if (body.length > 1600)
      return error(res, 400, 21617, "The concatenated message body exceeds the 1600 character limit.");
    const message: TwilioSent = {
      sid: sid(mediaUrl.length ? "MM" : "SM"),
      to,
      from: form.get("From") ?? "",
      body,
      mediaUrl,
    };
    fake.sent.push(message);
    json(res, 201, {
      sid: message.sid,
      account_sid: ACCOUNT_SID,
      to,
      from: message.from,
      body,
      status: "queued",
      num_segments: String(Math.ceil(body.length / 153) || 1),
      num_media: String(mediaUrl.length),
      direction: "outbound-api",
      api_version: "2010-04-01",
      date_created: new Date().toUTCString(),
      uri: `${base}/Messages/${message.sid}.json`,
    });
  }

  function route(method: string, path: string): string | undefined {
    if (method === "GET" && path === `${base}.json`) return "account";
    if (method === "POST" && path === `${base}/Messages.json`) return "messages";
    if (method === "GET" && path.startsWith(`${base}/Messages/`) && path.includes("/Media/")) return "media";
    return undefined;
  }

  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    void readBody(req).then((text) => {
      const name = route(req.method ?? "GET", path);
      fake.calls.push({ method: req.method ?? "GET", path, auth: req.headers.authorization });
      const expected = `Basic ${Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString("base64")}`;
      if (req.headers.authorization !== expected) return error(res, 401, 20003, "Authenticate");
      if (!name) return error(res, 404, 20404, "The requested resource was not found");
      const f = faults.get(name)?.shift();
      if (f) {
        res.writeHead(f.status, { "content-type": "application/json", ...f.headers });
        return void res.end(JSON.stringify(f.body ?? {}));
      }
      if (name === "account")
        return json(res, 200, {
          sid: ACCOUNT_SID,
          friendly_name: "Herald test account",
          status: "active",
          type: "Full",
        });
      if (name === "messages") return createMessage(new URLSearchParams(text), res);
      const item = media.get(path.split("/").at(-1)!);
      if (!item) return error(res, 404, 20404, "The requested resource was not found");
      res.writeHead(200, { "content-type": item.mimeType, "content-length": item.bytes.length });
      res.end(item.bytes);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const p of req) parts.push(p as Buffer);
  return Buffer.concat(parts).toString("utf8");
}

function json(res: ServerResponse, status: number, value: unknown): void {
  const data = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(data) });
  res.end(data);
}
