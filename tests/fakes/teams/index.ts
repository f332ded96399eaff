/**
 * A fake Microsoft Teams on 127.0.0.1, speaking Bot Framework's wire protocol: the OpenID metadata and
 * its JWKS (an RSA key generated per fake, endorsed for `msteams`), the Entra token endpoint
 * (client-credentials grant, `invalid_client` for a wrong secret), and the connector REST API v3
 * (`POST /v3/conversations/{id}/activities[/{replyTo}]`, `PUT`/`DELETE …/activities/{id}`,
 * `GET /v3/attachments/{id}/views/original`), each call needing a token it issued. Unknown
 * conversations answer 404 `ConversationNotFound`. Faults are queued per route; `signedRequest` builds
 * the POST Teams sends to a bot: the activity with a bearer JWT signed by the published key.
 */
import { createSign, generateKeyPairSync, type KeyObject, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export const APP_ID = "4f0c7e2a-0000-4000-8000-00000000a11d";
export const APP_PASSWORD = "teams-client-secret-7Qz~0123456789";
export const TENANT_ID = "9b1d0000-0000-4000-8000-0000000feed5";
export const BOT_ID = `28:${APP_ID}`;
const ISSUER = "https://api.botframework.com";

/** An activity the bot sent, as the connector holds it (updates applied). */
export interface FakeTeamsActivity {
  id: string;
  conversationId: string;
  type: string;
  text: string;
  attachments: { contentType: string; contentUrl?: string; content?: unknown; name?: string }[];
  replyToId?: string | undefined;
  deleted: boolean;
  updates: number;
}

export interface TeamsFault {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** A user in the fake tenant. */
export interface TeamsUser {
  id: string;
  name: string;
  aadObjectId: string;
}

export interface UserMessageInput {
  from: TeamsUser;
  conversationId: string;
  conversationType?: "personal" | "groupChat" | "channel";
  text: string;
  /** Mention the bot: `<at>Herald</at> ` is put before the text, with its entity. */
  mention?: boolean;
  attachments?: { contentType: string; contentUrl?: string; content?: unknown; name?: string }[];
  id?: string;
  value?: unknown;
  replyToId?: string;
}

export interface SignOptions {
  /** Sign with a key the JWKS does not publish. */
  foreignKey?: boolean;
  audience?: string;
  expired?: boolean;
  /** No Authorization header at all. */
  unsigned?: boolean;
}

const route = (method: string, path: string) => {
  if (/^\/v3\/conversations\/[^/]+\/activities$/.test(path)) return `${method} activities`;
  if (/^\/v3\/conversations\/[^/]+\/activities\/[^/]+$/.test(path)) return `${method} activity`;
  if (/\/oauth2\/v2\.0\/token$/.test(path)) return "POST token";
  return `${method} ${path}`;
};

const b64url = (v: string | Buffer) => Buffer.from(v).toString("base64url");

function signJwt(payload: object, key: KeyObject, kid: string): string {
  const head = b64url(JSON.stringify({ alg: "RS256", typ: "JWT", kid, x5t: kid }));
  const body = b64url(JSON.stringify(payload));
  const signature = createSign("RSA-SHA256").update(`${head}.${body}`).sign(key);
  return `${head}.${body}.${b64url(signature)}`;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Starts the fake. */
/** The signing keys, made once per process (RSA generation is slow on a busy machine). */
let keys: { privateKey: KeyObject; publicKey: KeyObject; foreign: KeyObject } | undefined;
const signingKeys = () => {
  keys ??= {
    ...generateKeyPairSync("rsa", { modulusLength: 2048 }),
    foreign: generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey,
  };
  return keys;
};

export async function startFakeTeams() {
  const { privateKey, publicKey, foreign } = signingKeys();
  const kid = `fake-${randomBytes(4).toString("hex")}`;
  const jwk = publicKey.export({ format: "jwk" });
  const tokens = new Set<string>();
  const activities: FakeTeamsActivity[] = [];
  const calls: { method: string; route: string; path: string; body: unknown; at: number; auth: boolean }[] =
    [];
  const faults = new Map<string, TeamsFault[]>();
  const files = new Map<string, { bytes: Buffer; mime: string }>();
  const conversations = new Set<string>();
  let next = 1;

  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
    res.end(JSON.stringify(body));
  };
  const authorised = (req: IncomingMessage) =>
    tokens.has((req.headers.authorization ?? "").replace(/^Bearer /, ""));
  const baseOf = (id: string) => id.split(";messageid=")[0]!;

  const server = createServer((req, res) => {
    void (async () => {
      const path = (req.url ?? "/").split("?")[0]!;
      const method = req.method ?? "GET";
      const raw = await readBody(req);
      const r = route(method, path);
      let body: unknown = raw;
      try {
        body = raw && !r.endsWith("token") ? JSON.parse(raw) : raw;
      } catch {}
      calls.push({ method, route: r, path, body, at: Date.now(), auth: Boolean(req.headers.authorization) });
      const fault = faults.get(r)?.shift();
      if (fault)
        return json(
          res,
          fault.status,
          fault.body ?? { error: { code: "Fault", message: "fault" } },
          fault.headers,
        );
      if (path === "/openid") {
        return json(res, 200, {
          issuer: ISSUER,
          authorization_endpoint: "https://invalid.botframework.com",
          jwks_uri: `${url}/keys`,
          id_token_signing_alg_values_supported: ["RS256"],
          token_endpoint_auth_methods_supported: ["private_key_jwt"],
        });
      }
      if (path === "/keys") {
        return json(res, 200, {
          keys: [{ kty: "RSA", use: "sig", kid, n: jwk.n, e: jwk.e, endorsements: ["msteams"] }],
        });
      }
      if (r === "POST token") {
        const form = new URLSearchParams(raw);
        if (form.get("client_id") !== APP_ID) {
          return json(res, 400, {
            error: "unauthorized_client",
            error_description: "AADSTS700016: Application not found.",
          });
        }
        if (form.get("client_secret") !== APP_PASSWORD || form.get("grant_type") !== "client_credentials") {
          return json(res, 401, {
            error: "invalid_client",
            error_description: "AADSTS7000215: Invalid client secret provided.",
          });
        }
        const token = `fake-teams-token-${randomBytes(8).toString("hex")}`;
        tokens.add(token);
        return json(res, 200, {
          token_type: "Bearer",
          expires_in: 3599,
          ext_expires_in: 3599,
          access_token: token,
        });
      }
      const shared = /^\/sharepoint\/([^/]+)$/.exec(path);
      if (shared) {
        const stored = files.get(shared[1]!);
        if (!stored) return json(res, 404, { error: { code: "itemNotFound" } });
        res.writeHead(200, { "content-type": stored.mime, "content-length": String(stored.bytes.length) });
        return res.end(stored.bytes);
      }
      const file = /^\/v3\/attachments\/([^/]+)\/views\/original$/.exec(path);
      if (file) {
        if (!authorised(req))
          return json(res, 401, { message: "Authorization has been denied for this request." });
        const stored = files.get(file[1]!);
        if (!stored) return json(res, 404, { error: { code: "NotFound" } });
        res.writeHead(200, { "content-type": stored.mime, "content-length": String(stored.bytes.length) });
        return res.end(stored.bytes);
      }
      const conv = /^\/v3\/conversations\/([^/]+)\/activities(?:\/([^/]+))?$/.exec(path);
      if (!conv)
        return json(res, 404, { error: { code: "NotFound", message: `no route ${method} ${path}` } });
      if (!authorised(req))
        return json(res, 401, { message: "Authorization has been denied for this request." });
      const conversationId = decodeURIComponent(conv[1]!);
      if (!conversations.has(baseOf(conversationId))) {
        return json(res, 404, {
          error: { code: "ConversationNotFound", message: "Conversation not found." },
        });
      }
      const activityId = conv[2] ? decodeURIComponent(conv[2]) : undefined;
      const sent = body as Partial<FakeTeamsActivity> & { type?: string };
      if (method === "POST") {
        const id = `${Date.now()}${String(next++).padStart(4, "0")}`;
        if (sent.type === "message") {
          activities.push({
            id,
            conversationId,
            type: "message",
            text: sent.text ?? "",
            attachments: sent.attachments ?? [],
            replyToId: activityId,
            deleted: false,
            updates: 0,
          });
        } else if (sent.type === "typing") typing.push(conversationId);
        return json(res, 201, { id });
      }
      const held = activities.find(
        (a) => a.id === activityId && baseOf(a.conversationId) === baseOf(conversationId),
      );
      if (!held || held.deleted)
        return json(res, 404, { error: { code: "ActivityNotFound", message: "Not found." } });
      if (method === "PUT") {
        held.text = sent.text ?? "";
        held.attachments = sent.attachments ?? [];
        held.updates += 1;
        return json(res, 200, { id: held.id });
      }
      if (method === "DELETE") {
        held.deleted = true;
        return json(res, 200, {});
      }
      return json(res, 405, {});
    })().catch((err: unknown) => {
      if (!res.headersSent) json(res, 500, { error: { code: "FakeFailed", message: String(err) } });
    });
  });
  const typing: string[] = [];
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const serviceUrl = `${url}/`;

  const fake = {
    url,
    serviceUrl,
    openIdMetadataUrl: `${url}/openid`,
    loginUrl: `${url}/{tenant}/oauth2/v2.0/token`,
    activities,
    calls,
    typing,
    /** Conversation (its base id) the connector knows. */
    addConversation(id: string) {
      conversations.add(baseOf(id));
    },
    /** The bot's visible messages in a conversation (its whole channel when given a base id), in order. */
    botMessagesIn(conversationId: string, thread?: string): FakeTeamsActivity[] {
      return activities.filter(
        (a) =>
          !a.deleted &&
          (thread === undefined
            ? baseOf(a.conversationId) === baseOf(conversationId)
            : a.conversationId === `${baseOf(conversationId)};messageid=${thread}`),
      );
    },
    /** What a message shows: its text, or the text blocks of its card. */
    shown(a: FakeTeamsActivity): string {
      const cards = a.attachments.flatMap((x) =>
        x.contentType === "application/vnd.microsoft.card.adaptive"
          ? ((x.content as { body?: { type: string; text?: string }[] }).body ?? [])
              .filter((b) => b.type === "TextBlock")
              .map((b) => b.text ?? "")
          : [],
      );
      return [a.text, ...cards].filter(Boolean).join("\n");
    },
    /** The labels of a card message's buttons. */
    buttons(a: FakeTeamsActivity): { title: string; data: Record<string, unknown> }[] {
      return a.attachments.flatMap((x) =>
        (
          (
            x.content as {
              body?: { type: string; actions?: { title: string; data: Record<string, unknown> }[] }[];
            }
          )?.body ?? []
        )
          .filter((b) => b.type === "ActionSet")
          .flatMap((b) => b.actions ?? []),
      );
    },
    /** The next `times` calls of a route (`POST activities`, `PUT activity`, `POST token` …) answer `fault`. */
    fault(r: string, f: TeamsFault, times = 1) {
      const list = faults.get(r) ?? [];
      for (let i = 0; i < times; i++) list.push(f);
      faults.set(r, list);
    },
    /** Stores a file the connector serves (bot token required); returns its contentUrl. */
    addFile(bytes: Buffer, mime: string): string {
      const id = `att-${randomBytes(6).toString("hex")}`;
      files.set(id, { bytes, mime });
      return `${url}/v3/attachments/${id}/views/original`;
    },
    /** A file shared in a personal chat: a pre-authorised download URL (OneDrive's, here the fake's). */
    addSharedFile(bytes: Buffer, mime: string): string {
      const id = `shared-${randomBytes(6).toString("hex")}`;
      files.set(id, { bytes, mime });
      return `${url}/sharepoint/${id}`;
    },
    /** A user's message activity, as Teams posts it. */
    userMessage(input: UserMessageInput) {
      fake.addConversation(input.conversationId);
      const type = input.conversationType ?? "personal";
      const text = input.mention ? `<at>Herald</at> ${input.text}` : input.text;
      return {
        type: "message",
        id: input.id ?? `${Date.now()}${String(next++).padStart(4, "0")}`,
        timestamp: new Date().toISOString(),
        serviceUrl,
        channelId: "msteams",
        from: { id: input.from.id, name: input.from.name, aadObjectId: input.from.aadObjectId },
        recipient: { id: BOT_ID, name: "Herald" },
        conversation: {
          id: input.conversationId,
          conversationType: type,
          tenantId: TENANT_ID,
          ...(type === "personal" ? {} : { isGroup: true }),
        },
        text,
        textFormat: "plain",
        locale: "en-US",
        ...(input.attachments ? { attachments: input.attachments } : {}),
        ...(input.value !== undefined ? { value: input.value } : {}),
        ...(input.replyToId ? { replyToId: input.replyToId } : {}),
        entities: input.mention
          ? [{ type: "mention", text: "<at>Herald</at>", mentioned: { id: BOT_ID, name: "Herald" } }]
          : [],
        channelData: { tenant: { id: TENANT_ID } },
      };
    },
    /** A click on a card's button: Teams posts a message whose value is the Action.Submit's data. */
    click(card: FakeTeamsActivity, title: string, from: TeamsUser) {
      const action = fake.buttons(card).find((b) => b.title === title);
      if (!action) throw new Error(`no button ${title}`);
      return fake.userMessage({
        from,
        conversationId: card.conversationId,
        text: "",
        value: action.data,
        replyToId: card.id,
      });
    },
    /** The POST Teams sends to the bot for `activity`, signed as Bot Framework signs it. */
    signedRequest(endpoint: string, activity: object, options: SignOptions = {}): Request {
      const now = Math.floor(Date.now() / 1000);
      const token = signJwt(
        {
          iss: ISSUER,
          aud: options.audience ?? APP_ID,
          serviceurl: (activity as { serviceUrl?: string }).serviceUrl ?? serviceUrl,
          nbf: now - 300,
          iat: now - 300,
          exp: options.expired ? now - 3600 : now + 3600,
        },
        options.foreignKey ? foreign : privateKey,
        kid,
      );
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (!options.unsigned) headers["authorization"] = `Bearer ${token}`;
      return new Request(endpoint, { method: "POST", headers, body: JSON.stringify(activity) });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}

export type FakeTeams = Awaited<ReturnType<typeof startFakeTeams>>;
