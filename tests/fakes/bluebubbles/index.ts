/**
 * A fake BlueBubbles server on 127.0.0.1: the REST API Herald uses (`GET /api/v1/server/info`,
 * `POST /api/v1/message/text`, `POST /api/v1/message/attachment` as multipart, `POST
 * /api/v1/chat/:guid/typing`, `POST /api/v1/message/query`, `GET /api/v1/attachment/:guid/download`),
 * every call checked for `?password=`, answering `{ status, message, data }` as the server does. It
 * posts webhook events (`new-message`, `updated-message`) to Herald, and keeps every message so a
 * query `after` a time finds the ones Herald missed. Faults queue per route.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export const SERVER_PASSWORD = "fake-bb-password-0042";

/** A DM's chat guid with a handle, and a group chat's. */
export const dmGuid = (handle: string) => `iMessage;-;${handle}`;
export const groupGuid = (name: string) => `iMessage;+;chat${Buffer.from(name).toString("hex")}`;

/** A message the bot sent, as the fake keeps it. */
export interface BbSent {
  guid: string;
  tempGuid: string;
  chat: string;
  text: string;
  method: string;
  attachment?: { name: string; mimeType: string; bytes: Buffer } | undefined;
}

export interface BbFault {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface FakeBlueBubbles {
  url: string;
  /** Herald's webhook (with its `?password=`). */
  webhookUrl: string;
  readonly sent: BbSent[];
  readonly calls: { method: string; path: string; body: unknown }[];
  /** Every message the server holds (incoming ones, as webhooks carry them). */
  readonly messages: Record<string, unknown>[];
  readonly chats: Set<string>;
  readonly attachments: Map<string, { bytes: Buffer; mimeType: string; name: string }>;
  sentTo(chat: string): BbSent[];
  fault(route: string, fault: BbFault): void;
  /** A message from `from` in `chat` (a DM with `from` by default); posted to the webhook unless `deliver: false`. */
  receive(input: {
    from: string;
    text: string;
    chat?: string;
    attachment?: { name: string; mimeType: string; bytes: Buffer };
    extra?: Record<string, unknown>;
    deliver?: boolean;
  }): Promise<{ status: number; message: Record<string, unknown> }>;
  /** Posts an event body to the webhook as is. */
  post(body: unknown, url?: string): Promise<number>;
  close(): Promise<void>;
}

export async function startFakeBlueBubbles(): Promise<FakeBlueBubbles> {
  const faults = new Map<string, BbFault[]>();
  let clock = Date.now();

  const fake: FakeBlueBubbles = {
    url: "",
    webhookUrl: "",
    sent: [],
    calls: [],
    messages: [],
    chats: new Set(),
    attachments: new Map(),
    sentTo: (chat) => fake.sent.filter((m) => m.chat === chat),
    fault(route, f) {
      faults.set(route, [...(faults.get(route) ?? []), f]);
    },
    async receive({ from, text, chat, attachment, extra, deliver = true }) {
      const chatGuid = chat ?? dmGuid(from);
      fake.chats.add(chatGuid);
      const attachments = [];
      if (attachment) {
        const guid = `at_${randomUUID()}`;
        fake.attachments.set(guid, attachment);
        attachments.push({
          guid,
          transferName: attachment.name,
          mimeType: attachment.mimeType,
          totalBytes: attachment.bytes.length,
        });
      }
      const message = {
        guid: randomUUID().toUpperCase(),
        text: attachment ? `\ufffc${text}` : text,
        isFromMe: false,
        dateCreated: ++clock,
        handle: { address: from, service: "iMessage", country: "us" },
        chats: [
          {
            guid: chatGuid,
            displayName: chatGuid.includes(";+;") ? "Family" : "",
            style: chatGuid.includes(";+;") ? 43 : 45,
          },
        ],
        attachments,
        associatedMessageGuid: null,
        associatedMessageType: null,
        threadOriginatorGuid: null,
        itemType: 0,
        isSystemMessage: false,
        ...extra,
      };
      fake.messages.push(message);
      const status = deliver ? await fake.post({ type: "new-message", data: message }) : 0;
      return { status, message };
    },
    async post(body, url = fake.webhookUrl) {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
      await res.text();
      return res.status;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };

  const answer = (res: ServerResponse, status: number, message: string, data?: unknown, error?: unknown) =>
    json(res, status, {
      status,
      message,
      ...(data !== undefined ? { data } : {}),
      ...(error ? { error } : {}),
    });

  function route(method: string, path: string): string | undefined {
    if (method === "GET" && path === "/api/v1/server/info") return "info";
    if (method === "POST" && path === "/api/v1/message/text") return "text";
    if (method === "POST" && path === "/api/v1/message/attachment") return "attachment";
    if (method === "POST" && path === "/api/v1/message/query") return "query";
    if (method === "POST" && /^\/api\/v1\/chat\/[^/]+\/typing$/.test(path)) return "typing";
    if (method === "GET" && /^\/api\/v1\/attachment\/[^/]+\/download$/.test(path)) return "download";
    return undefined;
  }

  function send(
    res: ServerResponse,
    fields: {
      chatGuid: string;
      tempGuid: string;
      text: string;
      method: string;
      attachment?: BbSent["attachment"];
    },
  ) {
    if (!fake.chats.has(fields.chatGuid)) {
      return answer(res, 400, "Chat does not exist!", undefined, {
        type: "Validation Error",
        message: "Chat does not exist!",
      });
    }
    const message: BbSent = { guid: randomUUID().toUpperCase(), ...fields, chat: fields.chatGuid };
    fake.sent.push(message);
    answer(res, 200, "Message sent!", {
      guid: message.guid,
      tempGuid: fields.tempGuid,
      text: fields.text,
      isFromMe: true,
      dateCreated: ++clock,
    });
  }

  async function handle(req: IncomingMessage, res: ServerResponse, raw: Buffer) {
    const url = new URL(req.url ?? "/", "http://x");
    const name = route(req.method ?? "GET", url.pathname);
    const type = req.headers["content-type"] ?? "";
    const body = type.startsWith("application/json") ? JSON.parse(raw.toString("utf8")) : undefined;
    fake.calls.push({ method: req.method ?? "GET", path: url.pathname, body });
    if (url.searchParams.get("password") !== SERVER_PASSWORD) {
      return answer(res, 401, "Unauthorized", undefined, {
        type: "Authentication Error",
        message: "You are not authorized to access this resource",
      });
    }
    if (!name) return answer(res, 404, "Not found");
    const f = faults.get(name)?.shift();
    if (f) {
      res.writeHead(f.status, { "content-type": "application/json", ...f.headers });
      return void res.end(JSON.stringify(f.body ?? { status: f.status, message: "fault" }));
    }
    switch (name) {
      case "info":
        return answer(res, 200, "Successfully fetched server info", {
          os_version: "14.5",
          server_version: "1.9.9",
          private_api: true,
          detected_icloud: "herald@icloud.com",
        });
      case "typing":
        return answer(res, 200, "Successfully started typing!");
      case "text":
        return send(res, {
          chatGuid: body.chatGuid,
          tempGuid: body.tempGuid,
          text: body.message,
          method: body.method,
        });
      case "attachment": {
        const form = await new Response(new Uint8Array(raw), {
          headers: { "content-type": type },
        }).formData();
        const file = form.get("attachment") as File;
        return send(res, {
          chatGuid: String(form.get("chatGuid")),
          tempGuid: String(form.get("tempGuid")),
          text: "",
          method: String(form.get("method")),
          attachment: {
            name: String(form.get("name")),
            mimeType: file.type,
            bytes: Buffer.from(await file.arrayBuffer()),
          },
        });
      }
      case "query": {
        const after = Number(body?.after ?? 0);
        const found = fake.messages
          .filter((m) => Number(m["dateCreated"]) > after)
          .slice(0, Number(body?.limit ?? 100));
        return answer(res, 200, "Successfully fetched messages", found);
      }
      default: {
        const item = fake.attachments.get(decodeURIComponent(url.pathname.split("/")[4]!));
        if (!item) return answer(res, 404, "Attachment does not exist!");
        res.writeHead(200, { "content-type": item.mimeType, "content-length": item.bytes.length });
        res.end(item.bytes);
      }
    }
  }

  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (p: Buffer) => parts.push(p));
    req.on("end", () => void handle(req, res, Buffer.concat(parts)));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

function json(res: ServerResponse, status: number, value: unknown): void {
  const data = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(data) });
  res.end(data);
}
