/**
 * A fake Google Chat on 127.0.0.1, speaking Google's wire protocols: the x509 certificates of
 * `chat@system.gserviceaccount.com` (a self-signed certificate made with openssl, once per process),
 * the OAuth token endpoint (JWT bearer grant, checked against the service account key it hands out),
 * and the Chat REST API v1 (`spaces.messages.create` with `messageId` and thread replies, `patch`,
 * `delete`, `media.download`), each call needing a token it issued. Unknown spaces answer 404.
 * `signedRequest` builds the POST Chat sends to an app: the event with a bearer JWT signed by Chat's key
 * for the project number. Faults are queued per route.
 */
import { execFileSync } from "node:child_process";
import {
  createPrivateKey,
  createSign,
  createVerify,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
} from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const PROJECT_NUMBER = "123456789012";
export const SA_EMAIL = "herald-chat@herald-test.iam.gserviceaccount.com";
const CHAT_ISSUER = "chat@system.gserviceaccount.com";

/** A message the fake holds. */
export interface FakeChatMessage {
  name: string;
  space: string;
  thread: string;
  text: string;
  cardsV2: { card?: { sections?: { widgets?: { buttonList?: { buttons: FakeButton[] } }[] }[] } }[];
  sender: string;
  deleted: boolean;
  updates: number;
}

export interface FakeButton {
  text: string;
  onClick: { action: { function: string; parameters: { key: string; value: string }[] } };
}

export interface ChatFault {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface ChatUser {
  name: string;
  displayName: string;
}

export interface SignOptions {
  foreignKey?: boolean;
  audience?: string;
  expired?: boolean;
  unsigned?: boolean;
}

let made: { chatKey: KeyObject; chatCert: string; foreign: KeyObject } | undefined;
/** Chat's signing key and certificate, made once per process. */
function chatKeys() {
  if (made) return made;
  const dir = mkdtempSync(join(tmpdir(), "fake-gchat-"));
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "2",
      "-subj",
      `/CN=${CHAT_ISSUER}`,
      "-keyout",
      join(dir, "key.pem"),
      "-out",
      join(dir, "cert.pem"),
    ],
    { stdio: "ignore" },
  );
  made = {
    chatKey: createPrivateKey(readFileSync(join(dir, "key.pem"))),
    chatCert: readFileSync(join(dir, "cert.pem"), "utf8"),
    foreign: generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey,
  };
  rmSync(dir, { recursive: true, force: true });
  return made;
}

const b64url = (v: string | Buffer) => Buffer.from(v).toString("base64url");
function signJwt(payload: object, key: KeyObject, kid: string): string {
  const head = b64url(JSON.stringify({ alg: "RS256", typ: "JWT", kid }));
  const body = b64url(JSON.stringify(payload));
  return `${head}.${body}.${b64url(createSign("RSA-SHA256").update(`${head}.${body}`).sign(key))}`;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

const route = (method: string, path: string) => {
  if (/^\/v1\/spaces\/[^/]+\/messages$/.test(path)) return `${method} messages`;
  if (/^\/v1\/spaces\/[^/]+\/messages\/[^/]+$/.test(path)) return `${method} message`;
  if (path.startsWith("/v1/media/")) return `${method} media`;
  return `${method} ${path}`;
};

/** Starts the fake. */
export async function startFakeGoogleChat() {
  const { chatKey, chatCert, foreign } = chatKeys();
  const sa = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const kid = `fake-${randomBytes(4).toString("hex")}`;
  const tokens = new Set<string>();
  const spaces = new Set<string>();
  const messages: FakeChatMessage[] = [];
  const media = new Map<string, { bytes: Buffer; mime: string }>();
  const faults = new Map<string, ChatFault[]>();
  const calls: { method: string; route: string; path: string; query: string; body: unknown; at: number }[] =
    [];
  let next = 1;
  const dir = mkdtempSync(join(tmpdir(), "fake-gchat-sa-"));

  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { "content-type": "application/json; charset=UTF-8", ...headers });
    res.end(JSON.stringify(body));
  };
  const error = (res: ServerResponse, code: number, status: string, message: string) =>
    json(res, code, { error: { code, message, status } });

  function grant(raw: string): string | undefined {
    const form = new URLSearchParams(raw);
    const [head, body, sig] = (form.get("assertion") ?? "").split(".");
    if (form.get("grant_type") !== "urn:ietf:params:oauth:grant-type:jwt-bearer" || !head || !body || !sig)
      return;
    const ok = createVerify("RSA-SHA256")
      .update(`${head}.${body}`)
      .verify(sa.publicKey, Buffer.from(sig, "base64url"));
    const claims = JSON.parse(Buffer.from(body, "base64url").toString()) as { iss?: string; scope?: string };
    if (!ok || claims.iss !== SA_EMAIL || !claims.scope?.includes("chat.bot")) return;
    const token = `ya29.fake-${randomBytes(8).toString("hex")}`;
    tokens.add(token);
    return token;
  }

  const server = createServer((req, res) => {
    void (async () => {
      const [path = "/", query = ""] = (req.url ?? "/").split("?");
      const method = req.method ?? "GET";
      const raw = await readBody(req);
      const r = route(method, path);
      let body: unknown = raw;
      try {
        body = raw && r !== "POST /token" ? JSON.parse(raw) : raw;
      } catch {}
      calls.push({ method, route: r, path, query, body, at: Date.now() });
      const fault = faults.get(r)?.shift();
      if (fault)
        return json(res, fault.status, fault.body ?? { error: { code: fault.status } }, fault.headers);
      if (path === "/certs")
        return json(res, 200, { [kid]: chatCert }, { "cache-control": "public, max-age=3600" });
      if (r === "POST /token") {
        const token = grant(raw);
        if (!token)
          return json(res, 400, { error: "invalid_grant", error_description: "Invalid JWT Signature." });
        return json(res, 200, { access_token: token, expires_in: 3599, token_type: "Bearer" });
      }
      if (!tokens.has((req.headers.authorization ?? "").replace(/^Bearer /, ""))) {
        return error(res, 401, "UNAUTHENTICATED", "Request had invalid authentication credentials.");
      }
      if (r === "GET media") {
        const stored = media.get(decodeURIComponent(path.slice("/v1/media/".length)));
        if (!stored) return error(res, 404, "NOT_FOUND", "Requested entity was not found.");
        res.writeHead(200, { "content-type": stored.mime });
        return res.end(stored.bytes);
      }
      const m = /^\/v1\/(spaces\/[^/]+)(?:\/messages(?:\/([^/]+))?)?$/.exec(path);
      if (!m || !spaces.has(m[1]!)) return error(res, 404, "NOT_FOUND", "Requested entity was not found.");
      const space = m[1]!;
      const params = new URLSearchParams(query);
      const sent = body as {
        text?: string;
        cardsV2?: FakeChatMessage["cardsV2"];
        thread?: { name?: string };
      };
      if (method === "POST" && !m[2]) {
        const id = params.get("messageId") ?? `m${next++}.${randomBytes(3).toString("hex")}`;
        const name = `${space}/messages/${id}`;
        if (messages.some((x) => x.name === name))
          return error(res, 409, "ALREADY_EXISTS", "Message already exists.");
        const thread = sent.thread?.name ?? `${space}/threads/t${next++}`;
        const msg: FakeChatMessage = {
          name,
          space,
          thread,
          text: sent.text ?? "",
          cardsV2: sent.cardsV2 ?? [],
          sender: "users/app",
          deleted: false,
          updates: 0,
        };
        messages.push(msg);
        return json(res, 200, {
          name,
          text: msg.text,
          thread: { name: thread },
          space: { name: space },
          createTime: new Date().toISOString(),
        });
      }
      const held = messages.find((x) => x.name === `${space}/messages/${m[2]}` && !x.deleted);
      if (!held) return error(res, 404, "NOT_FOUND", "Requested entity was not found.");
      if (method === "PATCH") {
        const mask = (params.get("updateMask") ?? "").split(",");
        if (mask.includes("text")) held.text = sent.text ?? "";
        if (mask.includes("cardsV2")) held.cardsV2 = sent.cardsV2 ?? [];
        held.updates += 1;
        return json(res, 200, { name: held.name, text: held.text });
      }
      if (method === "DELETE") {
        held.deleted = true;
        return json(res, 200, {});
      }
      return error(res, 405, "INVALID_ARGUMENT", "method");
    })().catch((err: unknown) => {
      if (!res.headersSent) error(res, 500, "INTERNAL", String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const serviceAccountPath = join(dir, "service-account.json");
  writeFileSync(
    serviceAccountPath,
    JSON.stringify({
      type: "service_account",
      project_id: "herald-test",
      private_key_id: randomBytes(8).toString("hex"),
      private_key: sa.privateKey.export({ type: "pkcs8", format: "pem" }),
      client_email: SA_EMAIL,
      client_id: "1000000000001",
      token_uri: `${url}/token`,
    }),
  );

  const fake = {
    url,
    certsUrl: `${url}/certs`,
    serviceAccountPath,
    messages,
    calls,
    addSpace(name: string) {
      spaces.add(name);
    },
    /** The app's visible messages in a space (one thread of it when given). */
    botMessagesIn(space: string, thread?: string): FakeChatMessage[] {
      return messages.filter(
        (x) => !x.deleted && x.space === space && (thread === undefined || x.thread === thread),
      );
    },
    buttons(msg: FakeChatMessage): FakeButton[] {
      return msg.cardsV2.flatMap((c) =>
        (c.card?.sections ?? []).flatMap((s) =>
          (s.widgets ?? []).flatMap((w) => w.buttonList?.buttons ?? []),
        ),
      );
    },
    fault(r: string, f: ChatFault, times = 1) {
      const list = faults.get(r) ?? [];
      for (let i = 0; i < times; i++) list.push(f);
      faults.set(r, list);
    },
    /** An upload the API serves; returns its attachment entry. */
    addUpload(space: string, contentName: string, contentType: string, bytes: Buffer) {
      const resourceName = `${space}/attachments/${randomBytes(6).toString("hex")}`;
      media.set(resourceName, { bytes, mime: contentType });
      return {
        name: `${resourceName}/a`,
        contentName,
        contentType,
        attachmentDataRef: { resourceName },
        source: "UPLOADED_CONTENT",
      };
    },
    /** A MESSAGE event, as Chat posts it to the app. */
    messageEvent(input: {
      from: ChatUser;
      space: string;
      dm?: boolean;
      text: string;
      thread?: string;
      mention?: boolean;
      attachment?: object[];
    }) {
      spaces.add(input.space);
      const name = `${input.space}/messages/u${next++}.${randomBytes(3).toString("hex")}`;
      const thread = input.thread ?? `${input.space}/threads/u${next++}`;
      const text = input.mention ? `@Herald ${input.text}` : input.text;
      const space = input.dm
        ? { name: input.space, type: "DM", spaceType: "DIRECT_MESSAGE", singleUserBotDm: true }
        : { name: input.space, type: "ROOM", spaceType: "SPACE", displayName: "Team" };
      const sender = { ...input.from, type: "HUMAN" };
      return {
        type: "MESSAGE",
        eventTime: new Date().toISOString(),
        message: {
          name,
          sender,
          createTime: new Date().toISOString(),
          text,
          argumentText: input.mention ? ` ${input.text}` : input.text,
          thread: { name: thread },
          space,
          ...(input.mention
            ? {
                annotations: [
                  {
                    type: "USER_MENTION",
                    startIndex: 0,
                    length: 7,
                    userMention: { user: { name: "users/app", type: "BOT" }, type: "MENTION" },
                  },
                ],
              }
            : {}),
          ...(input.attachment ? { attachment: input.attachment } : {}),
        },
        user: sender,
        space,
      };
    },
    /** A CARD_CLICKED event for a button of one of the app's messages. */
    clickEvent(msg: FakeChatMessage, label: string, from: ChatUser, dm = true) {
      const button = fake.buttons(msg).find((b) => b.text === label);
      if (!button) throw new Error(`no button ${label}`);
      const space = dm
        ? { name: msg.space, type: "DM", spaceType: "DIRECT_MESSAGE" }
        : { name: msg.space, type: "ROOM", spaceType: "SPACE" };
      const sender = { ...from, type: "HUMAN" };
      return {
        type: "CARD_CLICKED",
        eventTime: new Date().toISOString(),
        message: {
          name: msg.name,
          text: msg.text,
          thread: { name: msg.thread },
          sender: { name: "users/app", type: "BOT" },
          space,
        },
        user: sender,
        space,
        action: {
          actionMethodName: button.onClick.action.function,
          parameters: button.onClick.action.parameters,
        },
        common: { invokedFunction: button.onClick.action.function },
      };
    },
    /** The POST Chat sends to the app, with a bearer token signed by Chat for the project number. */
    signedRequest(endpoint: string, event: object, options: SignOptions = {}): Request {
      const now = Math.floor(Date.now() / 1000);
      const token = signJwt(
        {
          iss: CHAT_ISSUER,
          aud: options.audience ?? PROJECT_NUMBER,
          iat: now - 60,
          exp: options.expired ? now - 600 : now + 3600,
        },
        options.foreignKey ? foreign : chatKey,
        kid,
      );
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (!options.unsigned) headers["authorization"] = `Bearer ${token}`;
      return new Request(endpoint, { method: "POST", headers, body: JSON.stringify(event) });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return fake;
}

export type FakeGoogleChat = Awaited<ReturnType<typeof startFakeGoogleChat>>;
