/**
 * A fake Slack on 127.0.0.1 (random free port) speaking the real wire protocol to the real SDKs:
 * the Web API (`POST /api/<method>`, form or JSON, bearer token), private file downloads, the external
 * upload URL of `files.uploadV2`, and Socket Mode (`apps.connections.open` → WebSocket). Records every
 * call and can inject faults (429 with Retry-After, 5xx, Slack errors such as missing_scope, slow or
 * malformed answers).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { FakeSocketMode } from "./socket.js";
import type {
  FakeSlack,
  FakeSlackCall,
  FakeSlackFault,
  FakeSlackFile,
  FakeSlackMessage,
  FakeSlackOptions,
  FakeSlackUpload,
} from "./types.js";
import { fail, webApiHandlers } from "./web-api.js";

export {
  blockActionsPayload,
  eventCallback,
  loadFixture,
  messageEvent,
  signedInteraction,
  signedRequest,
} from "./events.js";
export type * from "./types.js";

type Json = Record<string, unknown>;

const JSON_ARGS = new Set(["files", "blocks", "attachments", "metadata"]);

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

function parseArgs(raw: Buffer, contentType: string): Json {
  const text = raw.toString("utf8");
  if (contentType.includes("application/json")) return text ? (JSON.parse(text) as Json) : {};
  const args: Json = {};
  for (const [k, v] of new URLSearchParams(text)) {
    args[k] = JSON_ARGS.has(k) ? safeJson(v) : v;
  }
  return args;
}

function safeJson(v: string): unknown {
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}

/** Starts the fake. Close it with `close()` after stopping the adapters that use it. */
export async function startFakeSlack(options: FakeSlackOptions = {}): Promise<FakeSlack> {
  const botToken = options.botToken ?? "xoxb-1111-2222-faketoken";
  const appToken = options.appToken ?? "xapp-1-A0001-3333-fakeapptoken";
  const botUserId = options.botUserId ?? "UHERALD01";
  const botId = options.botId ?? "BHERALD01";
  const teamId = options.teamId ?? "T0FAKE001";
  const calls: FakeSlackCall[] = [];
  const faults = new Map<string, FakeSlackFault[]>();
  const hosted = new Map<string, { bytes: Buffer; mimetype: string }>();
  const pendingUploads = new Map<string, { filename: string; bytes?: Buffer }>();
  const uploads: FakeSlackUpload[] = [];
  const messages: FakeSlackMessage[] = [];
  const downloads: { path: string; authorized: boolean }[] = [];
  const waiters = new Set<() => void>();
  let revoked = false;
  let seq = 0;
  let url = "";

  const nextTs = () => {
    seq += 1;
    return `${1_700_000_100 + seq}.${String(seq).padStart(6, "0")}`;
  };
  const nextId = (prefix: string) => `${prefix}${String(++seq).padStart(8, "0")}`;

  const handlers = webApiHandlers({
    ids: { botUserId, botId, teamId, appToken },
    users: options.users ?? {},
    pendingUploads,
    uploads,
    messages,
    nextTs,
    nextId,
    url: () => url,
  });

  const send = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
    if (options.scopes) headers["x-oauth-scopes"] = options.scopes.join(",");
    res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers }).end(body);
  };

  async function api(req: IncomingMessage, res: ServerResponse, method: string): Promise<void> {
    const raw = await readBody(req);
    const args = parseArgs(raw, req.headers["content-type"] ?? "");
    const header = req.headers.authorization?.replace(/^Bearer\s+/i, "");
    const token = header || (typeof args["token"] === "string" ? args["token"] : undefined);
    delete args["token"];
    const call: FakeSlackCall = { method, args, token };
    calls.push(call);
    for (const w of [...waiters]) w();
    const fault = faults.get(method)?.shift();
    if (fault?.kind === "slow") await new Promise((r) => setTimeout(r, fault.delayMs));
    else if (fault?.kind === "rate_limit")
      return send(res, 429, JSON.stringify(fail("ratelimited")), {
        "retry-after": String(fault.retryAfterSec),
      });
    else if (fault?.kind === "http")
      return send(res, fault.status, "upstream failure", { "content-type": "text/plain" });
    else if (fault?.kind === "malformed")
      return send(res, 200, "<html>not json</html>", { "content-type": "text/html" });
    else if (fault?.kind === "error")
      return send(
        res,
        200,
        JSON.stringify(
          fail(fault.error, fault.needed ? { needed: fault.needed, provided: "chat:write" } : {}),
        ),
      );
    const handler = handlers[method];
    if (!handler) return send(res, 200, JSON.stringify(fail("unknown_method")));
    if (method !== "apps.connections.open") {
      if (!token) return send(res, 200, JSON.stringify(fail("not_authed")));
      if (token !== botToken) return send(res, 200, JSON.stringify(fail("invalid_auth")));
      if (revoked) return send(res, 200, JSON.stringify(fail("token_revoked")));
    }
    send(res, 200, JSON.stringify(handler(args, call)));
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const apiMatch = /^\/api\/([A-Za-z.]+)$/.exec(path);
    if (apiMatch && req.method === "POST") return api(req, res, apiMatch[1]!);
    if (path.startsWith("/files-pri/") && req.method === "GET") {
      const authorized = req.headers.authorization === `Bearer ${botToken}` && !revoked;
      downloads.push({ path, authorized });
      const file = hosted.get(path);
      // Like Slack: without the token, the sign-in page instead of the file.
      if (!authorized)
        return void res.writeHead(200, { "content-type": "text/html" }).end("<html>Sign in to Slack</html>");
      if (!file) return void res.writeHead(404).end();
      return void res
        .writeHead(200, { "content-type": file.mimetype, "content-length": file.bytes.length })
        .end(file.bytes);
    }
    const upload = /^\/upload\/v1\/(F\w+)$/.exec(path);
    if (upload && req.method === "POST") {
      const pending = pendingUploads.get(upload[1]!);
      if (!pending) return void res.writeHead(404).end();
      const body = await readBody(req);
      const form = await new Request("http://x", {
        method: "POST",
        headers: { "content-type": req.headers["content-type"] ?? "" },
        body: new Uint8Array(body),
      }).formData();
      const part = [...form.values()].find((v): v is File => typeof v !== "string");
      pending.bytes = part ? Buffer.from(await part.arrayBuffer()) : body;
      return void res.writeHead(200, { "content-type": "text/plain" }).end(`OK - ${pending.bytes.length}`);
    }
    res.writeHead(404, { "content-type": "text/plain" }).end("no such route");
  }

  const server = createServer((req, res) => {
    route(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end(String(err));
    });
  });
  const socketMode = new FakeSocketMode(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const callsOf = (method: string) => calls.filter((c) => c.method === method);

  return {
    url,
    apiUrl: `${url}/api/`,
    botToken,
    appToken,
    botUserId,
    botId,
    teamId,
    calls,
    callsOf,
    waitForCall(method, where = () => true, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hit = calls.find((c) => c.method === method && where(c));
          if (!hit) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(hit);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`fake slack: no ${method} call within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    inject(method, fault, times = 1) {
      const list = faults.get(method) ?? [];
      for (let i = 0; i < times; i++) list.push(fault);
      faults.set(method, list);
    },
    revokeBotToken() {
      revoked = true;
    },
    hostFile(file) {
      const id = nextId("F");
      const path = `/files-pri/${teamId}-${id}/${encodeURIComponent(file.name)}`;
      const bytes = Buffer.isBuffer(file.content) ? file.content : Buffer.from(file.content);
      hosted.set(path, { bytes, mimetype: file.mimetype });
      return {
        id,
        name: file.name,
        title: file.name,
        mimetype: file.mimetype,
        filetype: file.name.split(".").pop() ?? "binary",
        size: file.size ?? bytes.length,
        mode: "hosted",
        url_private: `${url}${path}`,
        url_private_download: `${url}${path}`,
      } satisfies FakeSlackFile;
    },
    downloads,
    uploads,
    connectionCount: () => socketMode.connectionCount(),
    waitForConnections: (count, timeoutMs) => socketMode.waitForConnections(count, timeoutMs),
    pushEvent: (body, opts) => socketMode.push(body, opts),
    messages,
    requestReconnect: () => socketMode.requestReconnect(),
    dropConnection: () => socketMode.dropConnection(),
    async close() {
      await socketMode.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
