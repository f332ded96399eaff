/**
 * A fake WeCom server API on 127.0.0.1 (`/cgi-bin/gettoken`, `agent/get`, `message/send`,
 * `appchat/send`, `media/get`, `media/upload`), with tokens that expire on demand (42001), a Secret that
 * can be revoked (40001), and queued faults per method (e.g. 45033, "api concurrent out of limit").
 * `push` delivers a message to a callback URL as WeCom does: XML encrypted with the EncodingAESKey and
 * signed with `msg_signature`; `verifyUrl` makes WeCom's echostr GET.
 */
import { createCipheriv, createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export const CORP_ID = "ww0a1b2c3d4e5f6789";
export const AGENT_ID = 1000002;
export const SECRET = "wecom-app-secret-0123456789abcdefghij";
export const TOKEN = "wecomCallbackToken42";
/** 43 characters of base64: the EncodingAESKey. */
export const AES_KEY = createHash("sha256").update("herald-wecom").digest("base64").slice(0, 43);

/** A message the app sent. */
export interface WecomSent {
  method: "message/send" | "appchat/send";
  to: string;
  msgtype: string;
  body: Record<string, unknown>;
  msgid: string;
}

export interface FakeWecom {
  url: string;
  sent: WecomSent[];
  calls: { method: string; query: Record<string, string> }[];
  uploads: Map<string, { name: string; bytes: Buffer; type: string }>;
  tokensIssued: number;
  /** The markdown/text contents sent to `to` (a userid or an appchat id). */
  textsTo(to: string): string[];
  addUser(userid: string): void;
  addAppchat(chatid: string): void;
  addMedia(mediaId: string, bytes: Buffer, contentType: string, fileName: string): void;
  fault(method: string, answer: { errcode: number; errmsg: string }): void;
  expireTokens(): void;
  revokeSecret(): void;
  /** POSTs an encrypted, signed message (the XML inside) to `url`. */
  push(
    url: string,
    innerXml: string,
    options?: { token?: string; aesKey?: string; corpId?: string; timestampSec?: number },
  ): Promise<{ status: number; body: string }>;
  /** WeCom's URL check: GET with an encrypted echostr; the body answered. */
  verifyUrl(
    url: string,
    echo: string,
    options?: { token?: string },
  ): Promise<{ status: number; body: string }>;
  close(): Promise<void>;
}

/** The XML of a user's text message. */
export function textXml(
  from: string,
  content: string,
  msgId = String(Date.now()) + randomBytes(2).readUInt16BE(),
): string {
  return `<xml><ToUserName><![CDATA[${CORP_ID}]]></ToUserName><FromUserName><![CDATA[${from}]]></FromUserName><CreateTime>${Math.floor(Date.now() / 1000)}</CreateTime><MsgType><![CDATA[text]]></MsgType><Content><![CDATA[${content}]]></Content><MsgId>${msgId}</MsgId><AgentID>${AGENT_ID}</AgentID></xml>`;
}

/** The XML of a user's image, voice, video or file message. */
export function mediaXml(from: string, type: string, mediaId: string, msgId = String(Date.now())): string {
  return `<xml><ToUserName><![CDATA[${CORP_ID}]]></ToUserName><FromUserName><![CDATA[${from}]]></FromUserName><CreateTime>${Math.floor(Date.now() / 1000)}</CreateTime><MsgType><![CDATA[${type}]]></MsgType><MediaId><![CDATA[${mediaId}]]></MediaId><MsgId>${msgId}</MsgId><AgentID>${AGENT_ID}</AgentID></xml>`;
}

/** WeCom's encryption, written here independently of the adapter's: AES-256-CBC, key = base64(key43 + "="), IV = key[0..16], PKCS#7 to 32 bytes over random16 + len + msg + corpId. */
export function wecomEncrypt(message: string, corpId: string, aesKey: string): string {
  const key = Buffer.from(`${aesKey}=`, "base64");
  const msg = Buffer.from(message);
  const len = Buffer.from([
    msg.length >>> 24,
    (msg.length >>> 16) & 255,
    (msg.length >>> 8) & 255,
    msg.length & 255,
  ]);
  const plain = Buffer.concat([randomBytes(16), len, msg, Buffer.from(corpId)]);
  const n = 32 - (plain.length % 32);
  const cipher = createCipheriv("aes-256-cbc", key, key.subarray(0, 16));
  cipher.setAutoPadding(false);
  return Buffer.concat([cipher.update(Buffer.concat([plain, Buffer.alloc(n, n)])), cipher.final()]).toString(
    "base64",
  );
}

/** `msg_signature`: SHA-1 of the four parts sorted and joined. */
export const wecomSignature = (token: string, timestamp: string, nonce: string, encrypted: string): string =>
  createHash("sha1").update([token, timestamp, nonce, encrypted].sort().join("")).digest("hex");

const query = (url: URL) => Object.fromEntries(url.searchParams.entries());

/** Starts the fake. */
export async function startFakeWecom(): Promise<FakeWecom> {
  const sent: WecomSent[] = [];
  const calls: FakeWecom["calls"] = [];
  const uploads: FakeWecom["uploads"] = new Map();
  const tokens = new Set<string>();
  const users = new Set<string>();
  const appchats = new Set<string>();
  const media = new Map<string, { bytes: Buffer; contentType: string; fileName: string }>();
  const faults = new Map<string, { errcode: number; errmsg: string }[]>();
  let secret = SECRET;
  let issued = 0;
  let msgSeq = 0;

  const json = (res: ServerResponse, body: unknown): void =>
    void res.writeHead(200, { "content-type": "application/json; charset=UTF-8" }).end(JSON.stringify(body));

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://x");
    const method = url.pathname.replace(/^\/cgi-bin\//, "");
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    calls.push({ method, query: query(url) });
    if (method === "gettoken") {
      if (url.searchParams.get("corpid") !== CORP_ID)
        return json(res, { errcode: 40013, errmsg: "invalid corpid" });
      if (url.searchParams.get("corpsecret") !== secret)
        return json(res, { errcode: 40001, errmsg: "invalid credential" });
      const token = randomBytes(24).toString("base64url");
      tokens.add(token);
      issued++;
      return json(res, { errcode: 0, errmsg: "ok", access_token: token, expires_in: 7200 });
    }
    const token = url.searchParams.get("access_token") ?? "";
    if (!token) return json(res, { errcode: 41001, errmsg: "access_token missing" });
    if (!tokens.has(token)) return json(res, { errcode: 42001, errmsg: "access_token expired" });
    const fault = faults.get(method)?.shift();
    if (fault) return json(res, fault);
    const body = (
      raw.length && (req.headers["content-type"] ?? "").includes("json") ? JSON.parse(raw.toString()) : {}
    ) as Record<string, unknown>;
    switch (method) {
      case "agent/get":
        if (url.searchParams.get("agentid") !== String(AGENT_ID))
          return json(res, { errcode: 301002, errmsg: "not allow to operate another agent" });
        return json(res, { errcode: 0, errmsg: "ok", agentid: AGENT_ID, name: "Herald" });
      case "message/send": {
        if (body["agentid"] !== AGENT_ID) return json(res, { errcode: 40056, errmsg: "invalid agentid" });
        const to = String(body["touser"]);
        if (!users.has(to))
          return json(res, { errcode: 81013, errmsg: "user & party & tag all invalid", invaliduser: to });
        const msgid = `msg${++msgSeq}`;
        sent.push({ method, to, msgtype: String(body["msgtype"]), body, msgid });
        return json(res, { errcode: 0, errmsg: "ok", invaliduser: "", msgid });
      }
      case "appchat/send": {
        const to = String(body["chatid"]);
        if (!appchats.has(to)) return json(res, { errcode: 86003, errmsg: "chat not exist" });
        sent.push({ method, to, msgtype: String(body["msgtype"]), body, msgid: `chat${++msgSeq}` });
        return json(res, { errcode: 0, errmsg: "ok" });
      }
      case "media/get": {
        const m = media.get(url.searchParams.get("media_id") ?? "");
        if (!m) return json(res, { errcode: 40007, errmsg: "invalid media_id" });
        res
          .writeHead(200, {
            "content-type": m.contentType,
            "content-disposition": `attachment; filename="${m.fileName}"`,
            "content-length": String(m.bytes.length),
          })
          .end(m.bytes);
        return;
      }
      case "media/upload": {
        const form = await new Request("http://x", {
          method: "POST",
          headers: { "content-type": String(req.headers["content-type"]) },
          body: new Uint8Array(raw),
        }).formData();
        const file = form.get("media");
        if (!(file instanceof File)) return json(res, { errcode: 41005, errmsg: "media data missing" });
        const id = `3${randomBytes(12).toString("hex")}`;
        uploads.set(id, {
          name: file.name,
          bytes: Buffer.from(await file.arrayBuffer()),
          type: url.searchParams.get("type") ?? "",
        });
        return json(res, {
          errcode: 0,
          errmsg: "ok",
          type: url.searchParams.get("type"),
          media_id: id,
          created_at: String(Math.floor(Date.now() / 1000)),
        });
      }
      default:
        return json(res, { errcode: 60011, errmsg: `no such method ${method}` });
    }
  }

  const server = createServer((req, res) => {
    route(req, res).catch((err: unknown) => res.writeHead(500).end(String(err)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const signed = (target: string, encrypted: string, token: string, timestampSec?: number) => {
    const timestamp = String(timestampSec ?? Math.floor(Date.now() / 1000));
    const nonce = randomBytes(5).toString("hex");
    const u = new URL(target);
    u.searchParams.set("msg_signature", wecomSignature(token, timestamp, nonce, encrypted));
    u.searchParams.set("timestamp", timestamp);
    u.searchParams.set("nonce", nonce);
    return u;
  };

  return {
    url: base,
    sent,
    calls,
    uploads,
    get tokensIssued() {
      return issued;
    },
    textsTo: (to) =>
      sent
        .filter((s) => s.to === to && (s.msgtype === "markdown" || s.msgtype === "text"))
        .map((s) => String((s.body[s.msgtype] as { content: string }).content)),
    addUser: (u) => void users.add(u),
    addAppchat: (c) => void appchats.add(c),
    addMedia: (id, bytes, contentType, fileName) => void media.set(id, { bytes, contentType, fileName }),
    fault: (method, answer) => faults.set(method, [...(faults.get(method) ?? []), answer]),
    expireTokens: () => tokens.clear(),
    revokeSecret: () => {
      secret = `rotated-${randomBytes(4).toString("hex")}`;
      tokens.clear();
    },
    async push(target, innerXml, options = {}) {
      const encrypted = wecomEncrypt(innerXml, options.corpId ?? CORP_ID, options.aesKey ?? AES_KEY);
      const u = signed(target, encrypted, options.token ?? TOKEN, options.timestampSec);
      const body = `<xml><ToUserName><![CDATA[${CORP_ID}]]></ToUserName><AgentID><![CDATA[${AGENT_ID}]]></AgentID><Encrypt><![CDATA[${encrypted}]]></Encrypt></xml>`;
      const res = await fetch(u, { method: "POST", headers: { "content-type": "text/xml" }, body });
      return { status: res.status, body: await res.text() };
    },
    async verifyUrl(target, echo, options = {}) {
      const encrypted = wecomEncrypt(echo, CORP_ID, AES_KEY);
      const u = signed(target, encrypted, options.token ?? TOKEN);
      u.searchParams.set("echostr", encrypted);
      const res = await fetch(u);
      return { status: res.status, body: await res.text() };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
