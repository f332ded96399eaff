/**
 * A fake LINE platform on 127.0.0.1: the Messaging API (`GET /v2/bot/info`, `POST /v2/bot/message/reply`
 * with one-use reply tokens that expire, `POST /v2/bot/message/push` honouring `X-Line-Retry-Key` with
 * 409 for a key it accepted, `POST /v2/bot/chat/loading/start`) and the content API
 * (`GET /v2/bot/message/{id}/content`), Bearer-token checked. It delivers webhook events to Herald as
 * LINE does: a JSON body signed with the channel secret in `x-line-signature`. Faults queue per route.
 */
import { createHmac, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export const CHANNEL_SECRET = "fake-line-channel-secret-0042";
export const CHANNEL_TOKEN = "fake-line-access-token-4711";
export const BOT_USER_ID = `U${"b07".padEnd(32, "0")}`;

/** A LINE id of the given kind (`U` user, `C` group, `R` room) from a readable name. */
export const lineId = (kind: "U" | "C" | "R", name: string) =>
  `${kind}${Buffer.from(name).toString("hex").padEnd(32, "0").slice(0, 32)}`;

/** A message the bot sent, as the fake keeps it. */
export interface LineSent {
  id: string;
  chat: string;
  via: "reply" | "push";
  message: Record<string, unknown>;
  /** Its text: a text message's, a flex message's alt text, an image's URL. */
  text: string;
}

/** A fault answered instead of the next call of a route (`reply`, `push`, `info`, `content`, `loading`). */
export interface LineFault {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface FakeLine {
  url: string;
  /** Where events are delivered (Herald's `/webhooks/line`). */
  webhookUrl: string;
  readonly sent: LineSent[];
  readonly calls: { route: string; body: unknown; headers: IncomingMessage["headers"] }[];
  /** Chats pushes may go to (users, groups, rooms); others answer 400. */
  readonly chats: Set<string>;
  /** Content by message id. */
  readonly contents: Map<string, { bytes: Buffer; mimeType: string }>;
  /** Reply tokens by age: tokens older than this are refused. @defaultValue 60000 */
  replyTokenTtlMs: number;
  sentTo(chat: string): LineSent[];
  fault(route: string, fault: LineFault): void;
  /** A text message from `from` (in `group`, if given); `mention`: the bot is mentioned at the start. */
  text(input: { from: string; text: string; group?: string; mention?: boolean }): Promise<LineDelivery>;
  /** A tapped postback button. */
  postback(input: { from: string; data: string; group?: string }): Promise<LineDelivery>;
  /** An image or file message whose content the fake serves. */
  file(input: {
    from: string;
    kind: "image" | "file";
    bytes: Buffer;
    mimeType: string;
    fileName?: string;
  }): Promise<LineDelivery>;
  /** Delivers `events` (signed unless `signature` is given); resolves to Herald's answer. */
  deliver(events: unknown[], options?: { signature?: string; body?: string }): Promise<LineDelivery>;
  close(): Promise<void>;
}

export interface LineDelivery {
  status: number;
  event?: Record<string, unknown> | undefined;
  body: string;
}

let nextId = 500_000_000_000;

/** A channel of its own (a second LINE bot): its secret signs deliveries, its token is the one accepted. */
export interface FakeLineOptions {
  /** @defaultValue CHANNEL_SECRET */
  channelSecret?: string;
  /** @defaultValue CHANNEL_TOKEN */
  channelToken?: string;
}

export async function startFakeLine(options: FakeLineOptions = {}): Promise<FakeLine> {
  const channelSecret = options.channelSecret ?? CHANNEL_SECRET;
  const channelToken = options.channelToken ?? CHANNEL_TOKEN;
  const faults = new Map<string, LineFault[]>();
  const tokens = new Map<string, { issuedAt: number; used: boolean; chat: string }>();
  const retryKeys = new Map<string, string>();

  const event = (from: string, group: string | undefined, extra: Record<string, unknown>) => {
    const replyToken = randomUUID().replaceAll("-", "");
    tokens.set(replyToken, { issuedAt: Date.now(), used: false, chat: group ?? from });
    return {
      webhookEventId: `01H${randomUUID().replaceAll("-", "").slice(0, 23).toUpperCase()}`,
      deliveryContext: { isRedelivery: false },
      timestamp: Date.now(),
      mode: "active",
      replyToken,
      source: group
        ? {
            type: group.startsWith("R") ? "room" : "group",
            [group.startsWith("R") ? "roomId" : "groupId"]: group,
            userId: from,
          }
        : { type: "user", userId: from },
      ...extra,
    };
  };

  const fake: FakeLine = {
    url: "",
    webhookUrl: "",
    sent: [],
    calls: [],
    chats: new Set(),
    contents: new Map(),
    replyTokenTtlMs: 60_000,
    sentTo: (chat) => fake.sent.filter((s) => s.chat === chat),
    fault(route, f) {
      faults.set(route, [...(faults.get(route) ?? []), f]);
    },
    text({ from, text, group, mention }) {
      const body = mention ? `@Herald ${text}` : text;
      const message: Record<string, unknown> = {
        type: "text",
        id: String(++nextId),
        quoteToken: "q",
        text: body,
      };
      if (mention)
        message["mention"] = {
          mentionees: [{ index: 0, length: 7, type: "user", userId: BOT_USER_ID, isSelf: true }],
        };
      return fake.deliver([event(from, group, { type: "message", message })]);
    },
    postback({ from, data, group }) {
      return fake.deliver([event(from, group, { type: "postback", postback: { data } })]);
    },
    file({ from, kind, bytes, mimeType, fileName }) {
      const id = String(++nextId);
      fake.contents.set(id, { bytes, mimeType });
      const message: Record<string, unknown> = { type: kind, id, contentProvider: { type: "line" } };
      if (kind === "file") Object.assign(message, { fileName, fileSize: bytes.length });
      return fake.deliver([event(from, undefined, { type: "message", message })]);
    },
    async deliver(events, options = {}) {
      const body = options.body ?? JSON.stringify({ destination: BOT_USER_ID, events });
      const signature =
        options.signature ?? createHmac("sha256", channelSecret).update(body).digest("base64");
      const res = await fetch(fake.webhookUrl, {
        method: "POST",
        headers: { "content-type": "application/json", "x-line-signature": signature },
        body,
      });
      return {
        status: res.status,
        body: await res.text(),
        event: events[0] as Record<string, unknown> | undefined,
      };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };

  const record = (chat: string, via: LineSent["via"], messages: Record<string, unknown>[]) =>
    messages.map((message) => {
      const id = String(++nextId);
      const text = String(message["text"] ?? message["altText"] ?? message["originalContentUrl"] ?? "");
      fake.sent.push({ id, chat, via, message, text });
      return { id, quoteToken: `q${id}` };
    });

  function route(method: string, path: string): string | undefined {
    if (method === "GET" && path === "/v2/bot/info") return "info";
    if (method === "POST" && path === "/v2/bot/message/reply") return "reply";
    if (method === "POST" && path === "/v2/bot/message/push") return "push";
    if (method === "POST" && path === "/v2/bot/chat/loading/start") return "loading";
    if (method === "GET" && /^\/v2\/bot\/message\/\d+\/content$/.test(path)) return "content";
    return undefined;
  }

  function answer(
    name: string,
    path: string,
    body: Record<string, unknown>,
    headers: IncomingMessage["headers"],
    res: ServerResponse,
  ) {
    if (name === "info")
      return json(res, 200, {
        userId: BOT_USER_ID,
        basicId: "@123herald",
        displayName: "Herald",
        chatMode: "bot",
        markAsReadMode: "manual",
      });
    if (name === "loading") return json(res, 202, {});
    if (name === "content") {
      const content = fake.contents.get(path.split("/")[4]!);
      if (!content) return json(res, 404, { message: "Not found" });
      res.writeHead(200, { "content-type": content.mimeType, "content-length": content.bytes.length });
      return void res.end(content.bytes);
    }
    const messages = (body["messages"] as Record<string, unknown>[] | undefined) ?? [];
    if (messages.length === 0 || messages.length > 5)
      return json(res, 400, {
        message: "The request body has 1 error(s)",
        details: [{ message: "Size must be between 1 and 5", property: "messages" }],
      });
    for (const m of messages) {
      if (
        m["type"] === "text" &&
        (typeof m["text"] !== "string" || m["text"].length === 0 || m["text"].length > 5000)
      ) {
        return json(res, 400, {
          message: "The request body has 1 error(s)",
          details: [{ message: "Length must be between 1 and 5000", property: "messages[0].text" }],
        });
      }
    }
    if (name === "reply") {
      const token = tokens.get(String(body["replyToken"]));
      if (!token || token.used || Date.now() - token.issuedAt > fake.replyTokenTtlMs)
        return json(res, 400, { message: "Invalid reply token" });
      token.used = true;
      return json(res, 200, { sentMessages: record(token.chat, "reply", messages) });
    }
    const to = String(body["to"]);
    if (!fake.chats.has(to))
      return json(res, 400, {
        message: "The property, 'to', in the request body is invalid (line: -, column: -)",
      });
    const key = headers["x-line-retry-key"] as string | undefined;
    if (key && retryKeys.has(key)) {
      res.writeHead(409, {
        "content-type": "application/json",
        "x-line-accepted-request-id": retryKeys.get(key)!,
      });
      return void res.end(JSON.stringify({ message: "The retry key is already accepted" }));
    }
    const sentMessages = record(to, "push", messages);
    if (key) retryKeys.set(key, randomUUID());
    json(res, 200, { sentMessages });
  }

  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    void readBody(req).then((text) => {
      const name = route(req.method ?? "GET", path);
      if (!name) return json(res, 404, { message: "Not found" });
      const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      fake.calls.push({ route: name, body, headers: req.headers });
      if (req.headers.authorization !== `Bearer ${channelToken}`) {
        return json(res, 401, {
          message:
            "Authentication failed. Confirm that the access token in the authorization header is valid.",
        });
      }
      const f = faults.get(name)?.shift();
      if (f) {
        res.writeHead(f.status, { "content-type": "application/json", ...f.headers });
        return void res.end(JSON.stringify(f.body ?? { message: "fault" }));
      }
      answer(name, path, body, req.headers, res);
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
