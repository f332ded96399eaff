/**
 * A fake Matrix homeserver on 127.0.0.1 for end-to-end tests: the real matrix-js-sdk talks to it over
 * HTTP. It serves the Client-Server API subset a bot uses (see `routes.ts`), records every request, lets
 * a test play other users (rooms, messages, invites, threads, encrypted rooms) and inject faults (error
 * statuses with `retry_after_ms`, malformed bodies, slow answers).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type RouteResult, route } from "./routes.js";
import { HomeserverState } from "./state.js";
import type {
  FakeHomeserverOptions,
  FaultSpec,
  RecordedRequest,
  RoomSpec,
  SentEvent,
  StoredEvent,
  TypingCall,
} from "./types.js";

export { HomeserverState } from "./state.js";
export type * from "./types.js";

export interface FakeHomeserver {
  /** `http://127.0.0.1:<port>` (no trailing slash), the `MATRIX_HOMESERVER` value. */
  url: string;
  serverName: string;
  botUserId: string;
  botAccessToken: string;
  botPassword: string;
  state: HomeserverState;
  requests: RecordedRequest[];
  /** Events the bot created with `PUT /send` (each once, however often a txnId was retried). */
  sent: SentEvent[];
  typing: TypingCall[];
  /** Creates a room with `spec.members` joined; returns its id. */
  createRoom(spec: RoomSpec): string;
  /** Another user posts an `m.room.message` (text or full content); returns the event id. */
  userSends(roomId: string, sender: string, content: string | Record<string, unknown>): string;
  /** Appends any event (fixtures, malformed payloads); returns the event id. */
  injectEvent(
    roomId: string,
    event: Pick<StoredEvent, "type" | "sender" | "content"> & { state_key?: string },
  ): string;
  /** `inviter` invites `userId` (default the bot) to `roomId`. */
  invite(roomId: string, inviter: string, options?: { userId?: string; isDirect?: boolean }): void;
  setDisplayName(userId: string, name: string): void;
  /** Stores a file in the content repository; returns its `mxc://` URL. */
  addMedia(bytes: Buffer, contentType: string): string;
  /** Invalidates every access token (a revoked token / logged-out device). */
  revokeTokens(): void;
  fail(spec: FaultSpec): void;
  /** The bot's `m.room.message` events, optionally in one room. */
  messages(roomId?: string): SentEvent[];
  /** Resolves with `fn()`'s first truthy value, polling; rejects after `timeoutMs` (default 10 s). */
  waitFor<T>(fn: () => T | undefined | false | null, timeoutMs?: number): Promise<T>;
  /** Waits until the bot has sent at least `count` messages (in `roomId`). */
  waitForMessages(count: number, roomId?: string, timeoutMs?: number): Promise<SentEvent[]>;
  /** Requests to `/sync`, in order. */
  syncs(): RecordedRequest[];
  close(): Promise<void>;
}

interface ActiveFault extends FaultSpec {
  left: number;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

function matches(fault: ActiveFault, method: string, path: string): boolean {
  if (fault.left <= 0) return false;
  if (fault.method && fault.method !== method) return false;
  return typeof fault.path === "string" ? path.includes(fault.path) : fault.path.test(path);
}

/** Starts the fake homeserver on a free loopback port. */
export async function startFakeHomeserver(options: FakeHomeserverOptions = {}): Promise<FakeHomeserver> {
  const serverName = options.serverName ?? "localhost";
  const botUserId = `@${options.botLocalpart ?? "herald"}:${serverName}`;
  const botAccessToken = options.botAccessToken ?? "syt_bot_token";
  const botPassword = options.botPassword ?? "bot-password";
  const state = new HomeserverState(serverName);
  state.tokens.set(botAccessToken, { userId: botUserId, deviceId: "BOTDEVICE" });
  state.displayNames.set(botUserId, options.botDisplayName ?? "Herald");
  const requests: RecordedRequest[] = [];
  const typing: TypingCall[] = [];
  const media = new Map<string, { bytes: Buffer; contentType: string }>();
  const faults: ActiveFault[] = [];
  let waiters: (() => void)[] = [];
  let closed = false;
  state.onChange = () => {
    const w = waiters;
    waiters = [];
    for (const fn of w) fn();
  };
  const waitForChange = (ms: number) =>
    new Promise<void>((resolve) => {
      if (closed) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        waiters = waiters.filter((w) => w !== done);
        resolve();
      }
      waiters.push(done);
    });

  const reply = (res: ServerResponse, result: RouteResult) => {
    if (res.writableEnded || res.destroyed) return;
    if ("hold" in result) return;
    if ("bytes" in result) {
      res.writeHead(result.status, {
        "content-type": result.contentType,
        "content-length": result.bytes.length,
      });
      res.end(result.bytes);
      return;
    }
    const text = JSON.stringify(result.json);
    res.writeHead(result.status, { "content-type": "application/json" });
    res.end(text);
  };

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const path = decodeURIComponent(url.pathname);
    const method = req.method ?? "GET";
    const raw = await readBody(req);
    let body: Record<string, unknown> = {};
    const isJson = !path.startsWith("/_matrix/media/");
    if (isJson && raw.length > 0) {
      try {
        body = JSON.parse(raw.toString("utf8")) as Record<string, unknown>;
      } catch {
        reply(res, { status: 400, json: { errcode: "M_NOT_JSON", error: "Content not JSON." } });
        return;
      }
    }
    const auth = req.headers.authorization;
    const token = auth?.startsWith("Bearer ")
      ? auth.slice(7)
      : (url.searchParams.get("access_token") ?? undefined);
    const user = token ? state.tokens.get(token) : undefined;
    const query = Object.fromEntries(url.searchParams);
    requests.push({
      method,
      path,
      query,
      body: isJson ? body : { bytes: raw.length },
      userId: user?.userId,
      at: Date.now(),
    });

    const fault = faults.find((f) => matches(f, method, path));
    if (fault) {
      fault.left--;
      if (fault.delayMs) await new Promise((r) => setTimeout(r, fault.delayMs));
      if (fault.rawBody !== undefined || fault.status !== undefined) {
        if (res.destroyed) return;
        res.writeHead(fault.status ?? 200, { "content-type": "application/json", ...fault.headers });
        res.end(
          fault.rawBody ?? JSON.stringify(fault.body ?? { errcode: "M_UNKNOWN", error: "Injected fault" }),
        );
        return;
      }
    }
    if (closed) {
      reply(res, { status: 503, json: { errcode: "M_UNKNOWN", error: "shutting down" } });
      return;
    }
    const result = route(
      { method, path, query, body, rawBody: raw, contentType: req.headers["content-type"], token, user },
      {
        state,
        botUserId,
        botPassword,
        typing,
        media,
        waitForChange,
        isClosed: () => closed,
        maxSyncHoldMs: options.maxSyncHoldMs ?? 30_000,
      },
    ) ?? { status: 404, json: { errcode: "M_UNRECOGNIZED", error: "Unrecognized request" } };
    if ("hold" in result) result.hold((r) => reply(res, r));
    else reply(res, result);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;

  const fake: FakeHomeserver = {
    url: `http://127.0.0.1:${port}`,
    serverName,
    botUserId,
    botAccessToken,
    botPassword,
    state,
    requests,
    get sent() {
      return state.sent;
    },
    typing,
    createRoom(spec) {
      return state.createRoom(spec, botUserId);
    },
    userSends(roomId, sender, content) {
      const c = typeof content === "string" ? { msgtype: "m.text", body: content } : content;
      return state.append(roomId, { type: "m.room.message", sender, content: c }).event_id;
    },
    injectEvent(roomId, event) {
      return state.append(roomId, { ...event }).event_id;
    },
    invite(roomId, inviter, opts = {}) {
      state.member(
        roomId,
        opts.userId ?? botUserId,
        "invite",
        inviter,
        opts.isDirect ? { is_direct: true } : {},
      );
    },
    setDisplayName(userId, name) {
      state.displayNames.set(userId, name);
    },
    addMedia(bytes, contentType) {
      const id = `upload${media.size + 1}`;
      media.set(id, { bytes, contentType });
      return `mxc://${serverName}/${id}`;
    },
    revokeTokens() {
      state.tokens.clear();
    },
    fail(spec) {
      faults.push({ ...spec, left: spec.times ?? 1 });
    },
    messages(roomId) {
      return state.sent.filter((s) => s.type === "m.room.message" && (!roomId || s.roomId === roomId));
    },
    async waitFor(fn, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const value = fn();
        if (value) return value as never;
        if (Date.now() > deadline) throw new Error("fake homeserver: condition not met in time");
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    waitForMessages(count, roomId, timeoutMs) {
      return fake.waitFor(() => {
        const list = fake.messages(roomId);
        return list.length >= count ? list : undefined;
      }, timeoutMs);
    },
    syncs() {
      return requests.filter((r) => r.path === "/_matrix/client/v3/sync");
    },
    async close() {
      closed = true;
      state.onChange();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}
