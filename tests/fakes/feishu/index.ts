/**
 * A fake Feishu / Lark Open API on 127.0.0.1, as the SDK's Client calls it: the tenant access token
 * (`auth/v3/tenant_access_token/internal`, refused for a wrong or revoked secret), `bot/v3/info`, and
 * `im/v1` messages (create with `uuid` dedupe, reply, patch, delete), message resources, image and file
 * uploads (multipart). Every Open API call needs a live token (99991663 otherwise). Faults are queued
 * per route (`POST messages`), e.g. HTTP 429 with code 99991400 and `x-ogw-ratelimit-reset`. `push`
 * delivers an encrypted, signed event to a URL as Feishu's event subscription does.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { APP_ID, APP_SECRET, BOT_OPEN_ID, type PushOptions, signedEvent } from "./events.js";

export * from "./events.js";

/** A message the fake holds. */
export interface FeishuStoredMessage {
  message_id: string;
  chat_id: string;
  msg_type: string;
  content: string;
  fromBot: boolean;
  deleted: boolean;
  replyTo?: string | undefined;
  uuid?: string | undefined;
}

/** A fault answered instead of the next call of a route. */
export interface FeishuFault {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface FakeFeishu {
  url: string;
  messages: FeishuStoredMessage[];
  calls: { method: string; path: string; body: unknown }[];
  /** Uploaded files by key. */
  uploads: Map<string, { name: string; bytes: Buffer; kind: "image" | "file" }>;
  /** Tokens handed out so far. */
  tokensIssued: number;
  /** The bot's messages in a chat (not deleted), as the chat shows them: a card's Markdown, else the content. */
  botTextsIn(chatId: string): { id: string; text: string; msgType: string }[];
  /** The text a message now shows. */
  textOf(messageId: string): string | undefined;
  fault(route: string, fault: FeishuFault): void;
  /** Every token so far stops working (as at expiry); the next call gets 99991663. */
  expireTokens(): void;
  /** The app secret is rotated: token requests are refused, issued tokens die. */
  revokeSecret(): void;
  addChat(chatId: string): void;
  addResource(messageId: string, key: string, bytes: Buffer, contentType: string): void;
  /** POSTs an event to `url` as Feishu does; resolves to the answer. */
  push(url: string, payload: object, options?: PushOptions): Promise<{ status: number; body: string }>;
  close(): Promise<void>;
}

/** The Markdown a card shows (its markdown elements), or the raw content of another message. */
export function shownText(msgType: string, content: string): string {
  if (msgType !== "interactive") return content;
  const card = JSON.parse(content) as { elements?: { tag: string; content?: string }[] };
  return (card.elements ?? [])
    .filter((e) => e.tag === "markdown")
    .map((e) => e.content ?? "")
    .join("\n");
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Starts the fake. */
export async function startFakeFeishu(): Promise<FakeFeishu> {
  const messages: FeishuStoredMessage[] = [];
  const calls: FakeFeishu["calls"] = [];
  const faults = new Map<string, FeishuFault[]>();
  const tokens = new Set<string>();
  const chats = new Set<string>();
  const resources = new Map<string, { bytes: Buffer; contentType: string }>();
  const uploads: FakeFeishu["uploads"] = new Map();
  let secret = APP_SECRET;
  let issued = 0;

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
  };

  const newMessage = (chatId: string, body: Record<string, unknown>, replyTo?: string) => {
    const uuid = body["uuid"] as string | undefined;
    const seen = uuid ? messages.find((m) => m.uuid === uuid) : undefined;
    if (seen) return seen;
    const m: FeishuStoredMessage = {
      message_id: `om_${randomBytes(12).toString("hex")}`,
      chat_id: chatId,
      msg_type: String(body["msg_type"]),
      content: String(body["content"]),
      fromBot: true,
      deleted: false,
      replyTo,
      uuid,
    };
    messages.push(m);
    return m;
  };

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://x");
    const path = url.pathname.replace(/^\/open-apis\//, "");
    const raw = await readBody(req);
    const isJson = (req.headers["content-type"] ?? "").includes("json");
    const body = (isJson && raw.length ? JSON.parse(raw.toString()) : {}) as Record<string, unknown>;
    calls.push({ method: req.method ?? "GET", path, body });
    if (path === "auth/v3/tenant_access_token/internal") {
      if (body["app_id"] !== APP_ID || body["app_secret"] !== secret) {
        return send(res, 200, { code: 10014, msg: "app secret invalid" });
      }
      const token = `t-${randomBytes(10).toString("hex")}`;
      tokens.add(token);
      issued++;
      return send(res, 200, { code: 0, msg: "ok", tenant_access_token: token, expire: 7200 });
    }
    const auth = String(req.headers.authorization ?? "").replace(/^Bearer /, "");
    if (!tokens.has(auth)) {
      return send(res, 400, {
        code: 99991663,
        msg: "Invalid access token for authorization. Please make a request with token attached.",
      });
    }
    const key = `${req.method} ${path.replace(/^im\/v1\//, "").replace(/om_[0-9a-f]+/, ":id")}`;
    const fault = faults.get(key)?.shift();
    if (fault) return send(res, fault.status, fault.body, fault.headers);
    const ok = (data: unknown) => send(res, 200, { code: 0, msg: "success", data });
    const idMatch = /^im\/v1\/messages\/(om_[0-9a-f]+)/.exec(path);
    const target = idMatch ? messages.find((m) => m.message_id === idMatch[1]) : undefined;

    if (path === "bot/v3/info")
      return send(res, 200, {
        code: 0,
        msg: "ok",
        bot: { app_name: "Herald", open_id: BOT_OPEN_ID, activate_status: 2 },
      });
    if (req.method === "POST" && path === "im/v1/messages") {
      const chatId = String(body["receive_id"]);
      if (!chats.has(chatId))
        return send(res, 400, {
          code: 230001,
          msg: "Your request contains an invalid request parameter, ext=invalid receive_id",
        });
      return ok(newMessage(chatId, body));
    }
    const resource = /^im\/v1\/messages\/(om_[0-9a-f]+)\/resources\/([^/]+)$/.exec(path);
    if (req.method === "GET" && resource) {
      const file = resources.get(`${resource[1]}/${resource[2]}`);
      if (!file) return send(res, 400, { code: 234003, msg: "File not in msg." });
      res
        .writeHead(200, { "content-type": file.contentType, "content-length": String(file.bytes.length) })
        .end(file.bytes);
      return;
    }
    if (!target && idMatch) return send(res, 400, { code: 231003, msg: "The message is not found" });
    if (req.method === "POST" && target && path.endsWith("/reply"))
      return ok(newMessage(target.chat_id, body, target.message_id));
    if (req.method === "PATCH" && target) {
      if (target.deleted) return send(res, 400, { code: 230011, msg: "The message was withdrawn." });
      target.content = String(body["content"]);
      return ok({});
    }
    if (req.method === "DELETE" && target) {
      if (target.deleted) return send(res, 400, { code: 230011, msg: "The message was withdrawn." });
      target.deleted = true;
      return ok({});
    }
    if (req.method === "POST" && (path === "im/v1/images" || path === "im/v1/files")) {
      const form = await new Request("http://x", {
        method: "POST",
        headers: { "content-type": String(req.headers["content-type"]) },
        body: new Uint8Array(raw),
      }).formData();
      const kind = path.endsWith("images") ? "image" : "file";
      const file = form.get(kind) as File | null;
      if (!file) return send(res, 400, { code: 234001, msg: `no ${kind} field` });
      const fileKey = `${kind === "image" ? "img_v3_" : "file_v3_"}${randomBytes(8).toString("hex")}`;
      uploads.set(fileKey, {
        name: String(form.get("file_name") ?? file.name),
        bytes: Buffer.from(await file.arrayBuffer()),
        kind,
      });
      return ok(kind === "image" ? { image_key: fileKey } : { file_key: fileKey });
    }
    return send(res, 404, { code: 404, msg: `no route ${req.method} ${path}` });
  }

  const server = createServer((req, res) => {
    route(req, res).catch((err: unknown) => send(res, 500, { code: 500, msg: String(err) }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    messages,
    calls,
    uploads,
    get tokensIssued() {
      return issued;
    },
    botTextsIn: (chatId) =>
      messages
        .filter((m) => m.chat_id === chatId && m.fromBot && !m.deleted)
        .map((m) => ({ id: m.message_id, text: shownText(m.msg_type, m.content), msgType: m.msg_type })),
    textOf: (id) => {
      const m = messages.find((x) => x.message_id === id);
      return m ? shownText(m.msg_type, m.content) : undefined;
    },
    fault: (route, fault) => faults.set(route, [...(faults.get(route) ?? []), fault]),
    expireTokens: () => tokens.clear(),
    revokeSecret: () => {
      secret = `rotated-${randomBytes(4).toString("hex")}`;
      tokens.clear();
    },
    addChat: (chatId) => void chats.add(chatId),
    addResource: (messageId, key, bytes, contentType) =>
      void resources.set(`${messageId}/${key}`, { bytes, contentType }),
    async push(target, payload, options) {
      // A user's message exists on the platform before its event is pushed (a reply may quote it).
      const m = (
        payload as {
          event?: {
            message?: { message_id?: string; chat_id?: string; message_type?: string; content?: string };
          };
        }
      ).event?.message;
      if (m?.message_id && !messages.some((x) => x.message_id === m.message_id)) {
        messages.push({
          message_id: m.message_id,
          chat_id: String(m.chat_id),
          msg_type: String(m.message_type),
          content: String(m.content),
          fromBot: false,
          deleted: false,
        });
      }
      const { body, headers } = signedEvent(payload, options);
      const res = await fetch(target, { method: "POST", headers, body });
      return { status: res.status, body: await res.text() };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
