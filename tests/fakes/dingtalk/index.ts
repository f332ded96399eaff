/**
 * A fake DingTalk on 127.0.0.1: Stream mode (`POST /v1.0/gateway/connections/open` → a WebSocket
 * endpoint and a one-time ticket; the socket carries `SYSTEM` frames and `CALLBACK` frames the client
 * acknowledges with `{ code: 200, headers: { messageId } }`), the OpenAPI the adapter uses
 * (`oauth2/accessToken`, robot `oToMessages/batchSend` and `groupMessages/send`, `messageFiles/download`,
 * interactive cards send and update) with tokens in `x-acs-dingtalk-access-token`, tokens that expire on
 * demand (401), and queued faults per path (e.g. 429 `Throttling` with `Retry-After`).
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";

export const CLIENT_ID = "dingabcdef0123456789";
export const CLIENT_SECRET = "dingtalk-client-secret-0123456789abcdef";
export const TOPIC_ROBOT = "/v1.0/im/bot/messages/get";
export const TOPIC_CARD = "/v1.0/card/instances/callback";

/** A robot message or card the app sent. */
export interface DingtalkSent {
  path: string;
  /** A userid or an openConversationId. */
  to: string;
  text: string;
  body: Record<string, unknown>;
  id: string;
}

export interface FakeDingtalk {
  url: string;
  sent: DingtalkSent[];
  calls: { method: string; path: string; body: Record<string, unknown> }[];
  /** Messages ids of callbacks acknowledged by the client. */
  acked: Set<string>;
  connections: number;
  openSockets: number;
  tokensIssued: number;
  textsTo(to: string): string[];
  /** The current card data of a card (updates applied). */
  cards: Map<string, Record<string, unknown>>;
  addUser(userid: string): void;
  addGroup(cid: string): void;
  addFile(code: string, bytes: Buffer, contentType: string): void;
  fault(path: string, fault: { status: number; body: unknown; headers?: Record<string, string> }): void;
  expireTokens(): void;
  revokeSecret(): void;
  /** Pushes a callback on every open socket; resolves to its message id. */
  callback(topic: string, data: unknown): string;
  /** Pushes a raw text frame. */
  pushRaw(frame: string): void;
  dropSockets(): void;
  close(): Promise<void>;
}

/** A robot message's data as DingTalk sends it. */
export function robotMessage(m: {
  from: string;
  text?: string;
  group?: string;
  msgId?: string;
  msgtype?: string;
  content?: object;
  nick?: string;
}): Record<string, unknown> {
  return {
    conversationId: m.group ?? `cidDM${m.from}`,
    chatbotCorpId: "dingcorp01",
    chatbotUserId: "$:LWCP_v1:$bot",
    msgId: m.msgId ?? `msg${randomBytes(8).toString("hex")}`,
    senderNick: m.nick ?? m.from,
    isAdmin: false,
    senderStaffId: m.from,
    sessionWebhookExpiredTime: Date.now() + 5_400_000,
    createAt: Date.now(),
    senderCorpId: "dingcorp01",
    conversationType: m.group ? "2" : "1",
    senderId: `$:LWCP_v1:$${m.from}`,
    sessionWebhook: "https://oapi.dingtalk.com/robot/sendBySession?session=x",
    robotCode: CLIENT_ID,
    msgtype: m.msgtype ?? "text",
    ...(m.content ? { content: m.content } : { text: { content: ` ${m.text ?? ""}` } }),
    ...(m.group ? { isInAtList: true, conversationTitle: "Team" } : {}),
  };
}

/** Starts the fake. */
export async function startFakeDingtalk(): Promise<FakeDingtalk> {
  const sent: DingtalkSent[] = [];
  const calls: FakeDingtalk["calls"] = [];
  const acked = new Set<string>();
  const tokens = new Set<string>();
  const tickets = new Set<string>();
  const users = new Set<string>();
  const groups = new Set<string>();
  const files = new Map<string, { bytes: Buffer; contentType: string }>();
  const cards = new Map<string, Record<string, unknown>>();
  const faults = new Map<string, { status: number; body: unknown; headers?: Record<string, string> }[]>();
  const sockets = new Set<WebSocket>();
  let secret = CLIENT_SECRET;
  let issued = 0;
  let connections = 0;
  let seq = 0;

  const json = (
    res: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ): void =>
    void res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://x");
    const path = url.pathname.replace(/^\/v1\.0\//, "");
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = (chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : {}) as Record<
      string,
      unknown
    >;
    calls.push({ method: req.method ?? "GET", path, body });
    if (path === "gateway/connections/open") {
      if (body["clientId"] !== CLIENT_ID || body["clientSecret"] !== secret) {
        return json(res, 401, { code: "InvalidAuthentication", message: "clientId or clientSecret invalid" });
      }
      const ticket = randomBytes(12).toString("hex");
      tickets.add(ticket);
      return json(res, 200, { endpoint: `ws://127.0.0.1:${port}/connect`, ticket });
    }
    if (path === "oauth2/accessToken") {
      if (body["appKey"] !== CLIENT_ID || body["appSecret"] !== secret) {
        return json(res, 400, { code: "invalidClientSecret", message: "the appSecret is invalid" });
      }
      const token = randomBytes(16).toString("hex");
      tokens.add(token);
      issued++;
      return json(res, 200, { accessToken: token, expireIn: 7200 });
    }
    if (url.pathname.startsWith("/files/")) {
      const file = files.get(url.pathname.slice(7));
      if (!file) return json(res, 404, { code: "notFound" });
      res.writeHead(200, { "content-type": file.contentType }).end(file.bytes);
      return;
    }
    if (!tokens.has(String(req.headers["x-acs-dingtalk-access-token"] ?? ""))) {
      return json(res, 401, { code: "InvalidAuthentication", message: "不合法的access_token" });
    }
    const fault = faults.get(path)?.shift();
    if (fault) return json(res, fault.status, fault.body, fault.headers);
    const textOf = (param: unknown) => String((JSON.parse(String(param)) as { text?: string }).text ?? "");
    switch (path) {
      case "robot/oToMessages/batchSend": {
        const to = (body["userIds"] as string[])[0] ?? "";
        if (!users.has(to))
          return json(res, 400, { code: "invalidParameter.userIds.invalid", message: "userIds invalid" });
        const id = `pqk${++seq}`;
        sent.push({ path, to, text: textOf(body["msgParam"]), body, id });
        return json(res, 200, { processQueryKey: id, invalidStaffIdList: [], flowControlledStaffIdList: [] });
      }
      case "robot/groupMessages/send": {
        const to = String(body["openConversationId"]);
        if (!groups.has(to))
          return json(res, 400, { code: "invalidParameter.openConversationId", message: "group not found" });
        const id = `pqk${++seq}`;
        sent.push({ path, to, text: textOf(body["msgParam"]), body, id });
        return json(res, 200, { processQueryKey: id });
      }
      case "robot/messageFiles/download": {
        const code = String(body["downloadCode"]);
        if (!files.has(code))
          return json(res, 400, { code: "invalidParameter.downloadCode", message: "bad code" });
        return json(res, 200, { downloadUrl: `http://127.0.0.1:${port}/files/${code}` });
      }
      case "im/v1.0/robot/interactiveCards/send": {
        const receiver =
          body["openConversationId"] ??
          (JSON.parse(String(body["singleChatReceiver"])) as { userId: string }).userId;
        const to = String(receiver);
        if (!users.has(to) && !groups.has(to))
          return json(res, 400, { code: "invalidParameter", message: "receiver invalid" });
        const data = JSON.parse(String(body["cardData"])) as Record<string, unknown>;
        cards.set(String(body["cardBizId"]), data);
        const text = String((data["contents"] as { type: string; text?: string }[])[0]?.text ?? "");
        sent.push({ path, to, text, body, id: String(body["cardBizId"]) });
        return json(res, 200, { processQueryKey: `pqk${++seq}` });
      }
      case "im/robots/interactiveCards": {
        if (!cards.has(String(body["cardBizId"]))) return json(res, 400, { code: "cardNotFound" });
        cards.set(String(body["cardBizId"]), JSON.parse(String(body["cardData"])) as Record<string, unknown>);
        return json(res, 200, { success: true });
      }
      default:
        return json(res, 404, { code: "notFound", message: `no ${path}` });
    }
  }

  const server = createServer((req, res) => {
    route(req, res).catch((err: unknown) => json(res, 500, { code: "internal", message: String(err) }));
  });
  const wss = new WebSocketServer({ noServer: true });
  server.on("upgrade", (req, socket, head) => {
    const url = new URL(req.url ?? "/", "http://x");
    const ticket = url.searchParams.get("ticket") ?? "";
    if (url.pathname !== "/connect" || !tickets.delete(ticket)) {
      socket.end("HTTP/1.1 401 Unauthorized\r\n\r\n");
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      connections++;
      sockets.add(ws);
      ws.on("close", () => sockets.delete(ws));
      ws.on("message", (raw) => {
        const frame = JSON.parse(String(raw)) as { headers?: { messageId?: string } };
        if (frame.headers?.messageId) acked.add(frame.headers.messageId);
      });
      ws.send(
        JSON.stringify({
          specVersion: "1.0",
          type: "SYSTEM",
          headers: { topic: "CONNECTED", messageId: `sys${++seq}`, contentType: "application/json" },
          data: "{}",
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    sent,
    calls,
    acked,
    cards,
    get connections() {
      return connections;
    },
    get openSockets() {
      return sockets.size;
    },
    get tokensIssued() {
      return issued;
    },
    textsTo: (to) => sent.filter((s) => s.to === to).map((s) => s.text),
    addUser: (u) => void users.add(u),
    addGroup: (g) => void groups.add(g),
    addFile: (code, bytes, contentType) => void files.set(code, { bytes, contentType }),
    fault: (path, fault) => faults.set(path, [...(faults.get(path) ?? []), fault]),
    expireTokens: () => tokens.clear(),
    revokeSecret: () => {
      secret = `rotated-${randomBytes(4).toString("hex")}`;
      tokens.clear();
    },
    callback(topic, data) {
      const messageId = `cb${++seq}-${randomBytes(4).toString("hex")}`;
      const frame = JSON.stringify({
        specVersion: "1.0",
        type: "CALLBACK",
        headers: {
          appId: "app1",
          connectionId: "conn1",
          contentType: "application/json",
          messageId,
          time: String(Date.now()),
          topic,
        },
        data: typeof data === "string" ? data : JSON.stringify(data),
      });
      for (const ws of sockets) ws.send(frame);
      return messageId;
    },
    pushRaw: (frame) => {
      for (const ws of sockets) ws.send(frame);
    },
    dropSockets: () => {
      for (const ws of sockets) ws.terminate();
    },
    async close() {
      for (const ws of sockets) ws.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
