/**
 * A fake Discord on 127.0.0.1 (random free port) for end-to-end tests of the real discord.js client:
 * REST under `/api/v10` (point `DISCORD_API_URL` / discord.js `rest.api` at `fake.url`), the gateway
 * WebSocket that `GET /gateway/bot` names, and a CDN route for attachments. It records every REST call,
 * gateway frame and bot message, and can inject faults (429 with retry-after, 5xx, lost responses, slow
 * answers, malformed bodies).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { FakeGateway } from "./gateway.js";
import * as P from "./payloads.js";
import { apiError, type RouteResult, routes } from "./rest.js";
import { type FakeInteraction, FakeWorld } from "./state.js";
import type {
  FakeDiscordOptions,
  FaultRule,
  Json,
  PostedMessage,
  RecordedFile,
  RecordedRequest,
  UserMessageInput,
} from "./types.js";

export { IDS } from "./payloads.js";
export { computePings, type FakeInteraction, parseMentions } from "./state.js";
export type * from "./types.js";

/** A running fake Discord. */
export interface FakeDiscord {
  /** REST base as discord.js takes it (`http://127.0.0.1:PORT/api`); it appends `/v10`. */
  readonly url: string;
  readonly token: string;
  readonly gateway: FakeGateway;
  readonly world: FakeWorld;
  /** Every REST call, in arrival order. */
  readonly requests: RecordedRequest[];
  /** Messages the bot created, in order. */
  readonly posted: PostedMessage[];
  /** A user message dispatched as MESSAGE_CREATE (stored, so replies and threads can refer to it). */
  userSays(input: UserMessageInput): Json;
  /**
   * Opens a public thread in `parentId` as a user would. With `announce` false no THREAD_CREATE is
   * dispatched (a thread the client has not seen, e.g. created while it was offline).
   */
  createThread(parentId: string, name: string, ownerId?: string, announce?: boolean): Json;
  /** A user runs a native slash command (INTERACTION_CREATE); returns the interaction record. */
  /** A user runs `/name` (with `text` in its text option) from the `/` menu: an INTERACTION_CREATE. */
  runCommand(channelId: string, name: string, userId?: string, text?: string): FakeInteraction;
  /**
   * A user clicks the button labelled `label` on the bot's message `messageId` (INTERACTION_CREATE of a
   * message component); returns the interaction record. @throws when the message has no such button
   */
  clickButton(input: {
    channelId: string;
    messageId: string;
    label: string;
    userId?: string;
  }): FakeInteraction;
  /** Injects a fault for the next matching REST call(s). */
  fail(rule: FaultRule): void;
  /** Bot messages in `channelId` that are not deleted. */
  botMessages(channelId?: string): PostedMessage[];
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

async function parseBody(
  raw: Buffer,
  contentType: string,
): Promise<{ body: Json | undefined; files: RecordedFile[] }> {
  if (raw.length === 0) return { body: undefined, files: [] };
  if (contentType.startsWith("multipart/form-data")) {
    const form = await new Response(new Uint8Array(raw), {
      headers: { "content-type": contentType },
    }).formData();
    const files: RecordedFile[] = [];
    let body: Json | undefined;
    for (const [field, value] of form.entries()) {
      if (typeof value === "string") {
        if (field === "payload_json") body = JSON.parse(value);
      } else {
        files.push({
          field,
          name: value.name,
          contentType: value.type,
          data: Buffer.from(await value.arrayBuffer()),
        });
      }
    }
    return { body, files };
  }
  return { body: JSON.parse(raw.toString("utf8")), files: [] };
}

function write(res: ServerResponse, result: RouteResult, headers: Record<string, string> = {}): void {
  if (res.destroyed) return;
  if (result.body === undefined) {
    res.writeHead(result.status, headers).end();
    return;
  }
  const data = JSON.stringify(result.body);
  res.writeHead(result.status, { "content-type": "application/json", ...headers }).end(data);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts the fake. Always `close()` it (drops keep-alive and WebSocket connections). */
export async function startFakeDiscord(options: FakeDiscordOptions = {}): Promise<FakeDiscord> {
  const token = options.token ?? "fake-bot-token";
  const requests: RecordedRequest[] = [];
  const faults: (FaultRule & { left: number })[] = [];
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const base = `http://127.0.0.1:${port}`;
  const world = new FakeWorld(base);
  const gateway = new FakeGateway({
    token,
    heartbeatIntervalMs: options.heartbeatIntervalMs ?? 41_250,
    messageContentIntent: options.messageContentIntent ?? true,
    ready: (sessionId) => P.ready(sessionId, `ws://127.0.0.1:${port}/resume`),
    guilds: () => [P.guildCreate(world.guildChannels(), world.threads())],
  });
  const table = routes(world, gateway, `ws://127.0.0.1:${port}/gateway`, options.nonceWindowMs ?? 300_000);

  server.on("upgrade", (req, socket, head) => {
    const path = new URL(req.url ?? "/", base).pathname.replace(/\/$/, "");
    if (path === "/gateway" || path === "/resume") gateway.handleUpgrade(req, socket, head);
    else socket.destroy();
  });

  server.on("request", async (req, res) => {
    const url = new URL(req.url ?? "/", base);
    const method = req.method ?? "GET";
    const raw = await readBody(req);
    const blob = world.blobs.get(url.pathname);
    if (method === "GET" && blob) {
      res.writeHead(200, { "content-type": blob.contentType, "content-length": blob.data.length });
      res.end(blob.data);
      return;
    }
    const path = decodeURIComponent(url.pathname.replace(/^\/api\/v10/, ""));
    const authorized = req.headers.authorization === `Bot ${token}`;
    let parsed: { body: Json | undefined; files: RecordedFile[] };
    try {
      parsed = await parseBody(raw, String(req.headers["content-type"] ?? ""));
    } catch {
      parsed = { body: undefined, files: [] };
    }
    const record: RecordedRequest = {
      method,
      path,
      query: Object.fromEntries(url.searchParams),
      body: parsed.body,
      files: parsed.files,
      status: 0,
      authorized,
    };
    requests.push(record);
    const answer = (result: RouteResult, headers?: Record<string, string>) => {
      record.status = res.destroyed ? 0 : result.status;
      write(res, result, headers);
    };
    if (!url.pathname.startsWith("/api/v10/")) return answer(apiError(404, 0, "404: Not Found"));
    // Interaction callbacks and webhook messages are authorized by their token in the path.
    const tokenInPath = /^\/(interactions|webhooks)\//.test(path);
    if (!authorized && !tokenInPath) return answer(apiError(401, 0, "401: Unauthorized"));
    const route = table.find(([m, re]) => m === method && re.test(path));
    if (!route) return answer(apiError(404, 0, "404: Not Found"));
    const params = route[1].exec(path)!.slice(1);
    const run = () => route[2]({ params, query: url.searchParams, body: parsed.body, files: parsed.files });

    const fault = faults.find((f) => f.left > 0 && (!f.method || f.method === method) && f.path.test(path));
    if (!fault) return answer(run());
    fault.left -= 1;
    const committed =
      fault.commit || (fault.status === undefined && fault.rawBody === undefined) ? run() : undefined;
    if (fault.delayMs) await sleep(fault.delayMs);
    if (fault.rawBody !== undefined) {
      record.status = 200;
      if (!res.destroyed) res.writeHead(200, { "content-type": "application/json" }).end(fault.rawBody);
      return;
    }
    if (fault.status === undefined) return answer(committed!);
    if (fault.status === 429) {
      const retryAfterMs = fault.retryAfterMs ?? 1000;
      return answer(
        {
          status: 429,
          body: { message: "You are being rate limited.", retry_after: retryAfterMs / 1000, global: false },
        },
        { "retry-after": String(retryAfterMs / 1000), "x-ratelimit-scope": "user" },
      );
    }
    if (fault.status >= 500)
      return answer({ status: fault.status, body: { message: "Internal Server Error", code: 0 } });
    return answer(apiError(fault.status, fault.code ?? 0, `fake ${fault.status}`));
  });

  return {
    url: `${base}/api`,
    token,
    gateway,
    world,
    requests,
    posted: world.posted,
    userSays(input) {
      const author = input.authorId ?? P.IDS.alice;
      const message = world.buildMessage(input.channelId, author, input.content);
      if (input.replyTo) world.makeReply(message, input.replyTo);
      message["attachments"] = (input.attachments ?? []).map((a) =>
        world.storeAttachment(input.channelId, a),
      );
      if (input.attachments?.some((a) => a.voice)) message["flags"] = 1 << 13;
      message["nonce"] = P.snowflake();
      Object.assign(message, input.overrides ?? {});
      world.messages.set(message["id"], message);
      gateway.dispatch("MESSAGE_CREATE", message);
      return message;
    },
    runCommand(channelId, name, userId = P.IDS.alice, text) {
      const channel = world.channels.get(channelId);
      if (!channel) throw new Error(`fake discord: unknown channel ${channelId}`);
      const id = P.snowflake();
      const token = `itoken-${id}`;
      const record: FakeInteraction = {
        id,
        token,
        name,
        channelId,
        callbacks: [],
        reply: undefined,
        deleted: false,
      };
      world.interactions.set(id, record);
      gateway.dispatch(
        "INTERACTION_CREATE",
        P.commandInteraction(id, token, name, world.user(userId), channel, text),
      );
      return record;
    },
    clickButton({ channelId, messageId, label, userId = P.IDS.alice }) {
      const channel = world.channels.get(channelId);
      const message = world.messages.get(messageId);
      const button = (message?.["components"] ?? [])
        .flatMap((row: Json) => row["components"] as Json[])
        .find((b: Json) => b["label"] === label);
      if (!channel || !message || !button)
        throw new Error(`fake discord: no button "${label}" on ${messageId}`);
      const id = P.snowflake();
      const record: FakeInteraction = {
        id,
        token: `itoken-${id}`,
        name: String(button["custom_id"]),
        channelId,
        callbacks: [],
        reply: undefined,
        deleted: false,
      };
      world.interactions.set(id, record);
      gateway.dispatch(
        "INTERACTION_CREATE",
        P.buttonInteraction(id, record.token, record.name, message, world.user(userId), channel),
      );
      return record;
    },
    createThread(parentId, name, ownerId = P.IDS.alice, announce = true) {
      const thread = P.thread(P.snowflake(), parentId, name, ownerId);
      thread["guild_id"] = world.channels.get(parentId)?.["guild_id"];
      world.channels.set(thread["id"], thread);
      if (announce) gateway.dispatch("THREAD_CREATE", { ...thread, newly_created: true });
      return thread;
    },
    fail(rule) {
      faults.push({ ...rule, left: rule.times ?? 1 });
    },
    botMessages(channelId) {
      return world.posted.filter((p) => !p.deleted && (!channelId || p.channelId === channelId));
    },
    async close() {
      await gateway.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
