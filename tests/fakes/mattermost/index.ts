/**
 * A fake Mattermost server on 127.0.0.1: the REST API v4 the adapter uses (`users/me`, `users/{id}`,
 * `channels/{id}`, `posts` POST, `posts/{id}` PUT/DELETE, `files` multipart upload, `files/{id}` and
 * `files/{id}/info`, `users/me/typing`) with bearer-token auth, and the WebSocket `/api/v4/websocket`
 * with the `authentication_challenge` handshake, `hello`, and `posted` events whose `data.post` is a JSON
 * string (as the real server sends them). Every post, including the bot's own, is broadcast. Faults can
 * be queued per route (`POST posts`), and any raw frame can be pushed to the open sockets.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";

export const BOT_TOKEN = "mm-bot-token-0123456789";
/** A Mattermost-shaped id (26 lowercase letters and digits) made from a label, for readable tests. */
export const mmId = (label: string): string =>
  label
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "")
    .padEnd(26, "0")
    .slice(0, 26);

export const BOT_ID = mmId("herald-bot");
export const BOT_USERNAME = "herald";

/** A post the fake holds. */
export interface FakePost {
  id: string;
  channel_id: string;
  user_id: string;
  root_id: string;
  message: string;
  file_ids: string[];
  create_at: number;
  update_at: number;
  delete_at: number;
  type: string;
  props: Record<string, unknown>;
}

/** A stored file. */
export interface FakeFile {
  id: string;
  name: string;
  size: number;
  mime_type: string;
  bytes: Buffer;
  channel_id: string;
}

/** A fault answered instead of the next call of a route (`"POST posts"`, `"PUT posts/:id"`…). */
export interface MattermostFault {
  status: number;
  body?: unknown;
  /** Sent as text/plain when a string (the rate limiter's answer). */
  text?: string;
  headers?: Record<string, string>;
}

export interface UserPostInput {
  from: string;
  channel: string;
  text: string;
  rootId?: string;
  fileIds?: string[];
}

export interface FakeMattermost {
  url: string;
  readonly posts: FakePost[];
  readonly files: Map<string, FakeFile>;
  /** Every REST call: method, route (with ids) and JSON body. */
  readonly calls: { method: string; path: string; body: unknown }[];
  /** Channels by id: type `D` (direct), `O`, `P` or `G`. */
  readonly channels: Map<string, { id: string; type: string; name: string }>;
  readonly users: Map<string, { id: string; username: string }>;
  /** WebSocket connections made (authenticated or not). */
  readonly connections: number;
  /** Open authenticated sockets now. */
  readonly openSockets: number;
  addUser(id: string, username: string): void;
  addChannel(id: string, type: string, name?: string): void;
  /** A user writes a post: stored and broadcast as `posted`. Returns the post id. */
  userPost(input: UserPostInput): string;
  /** Stores a file a user uploaded; returns its id for `fileIds`. */
  addFile(channel: string, name: string, mimeType: string, bytes: Buffer): string;
  /** Sends a frame as is to every authenticated socket. */
  pushRaw(frame: unknown): void;
  /** The bot's visible posts in a channel (edits applied, deleted left out), in order. */
  botPostsIn(channel: string): FakePost[];
  fault(route: string, fault: MattermostFault): void;
  /** The WebSocket refuses every authentication challenge (REST still answers). */
  refuseSocketAuth: boolean;
  /** Open sockets stop answering pings (a half-open connection); new ones answer again. */
  freezeSockets(): void;
  /** Closes every socket (the client must reconnect). */
  dropSockets(): void;
  close(): Promise<void>;
}

const newId = () => randomBytes(13).toString("hex");

export async function startFakeMattermost(): Promise<FakeMattermost> {
  const posts: FakePost[] = [];
  const files = new Map<string, FakeFile>();
  const calls: FakeMattermost["calls"] = [];
  const channels = new Map<string, { id: string; type: string; name: string }>();
  const users = new Map<string, { id: string; username: string }>([
    [BOT_ID, { id: BOT_ID, username: BOT_USERNAME }],
  ]);
  const faults = new Map<string, MattermostFault[]>();
  const sockets = new Set<WebSocket>();
  const seqs = new WeakMap<WebSocket, number>();
  let connections = 0;
  let clock = 1_700_000_000_000;

  const send = (ws: WebSocket, frame: Record<string, unknown>) => {
    const seq = seqs.get(ws) ?? 0;
    seqs.set(ws, seq + 1);
    ws.send(JSON.stringify({ ...frame, seq }));
  };

  const broadcastPost = (post: FakePost) => {
    const channel = channels.get(post.channel_id);
    const sender = users.get(post.user_id);
    const mentions = post.message.includes(`@${BOT_USERNAME}`) ? [BOT_ID] : [];
    const data: Record<string, unknown> = {
      channel_display_name: channel?.name ?? "",
      channel_name: channel?.name ?? "",
      channel_type: channel?.type ?? "O",
      post: JSON.stringify(post),
      sender_name: `@${sender?.username ?? "someone"}`,
      set_online: true,
      team_id: "team00000000000000000000aa",
    };
    if (mentions.length) data["mentions"] = JSON.stringify(mentions);
    for (const ws of sockets) {
      send(ws, { event: "posted", data, broadcast: { channel_id: post.channel_id } });
    }
  };

  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { "Content-Type": "application/json", ...headers });
    res.end(JSON.stringify(body));
  };
  const appError = (res: ServerResponse, status: number, id: string, message: string) =>
    json(res, status, { id, message, detailed_error: "", request_id: newId(), status_code: status });

  const readBody = async (req: IncomingMessage): Promise<Buffer> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://x");
    const path = url.pathname.replace(/^\/api\/v4\//, "");
    const method = req.method ?? "GET";
    const raw = await readBody(req);
    const isJson = (req.headers["content-type"] ?? "").includes("application/json");
    const body = isJson && raw.length ? (JSON.parse(raw.toString()) as Record<string, unknown>) : undefined;
    calls.push({ method, path, body });
    // The server takes the scheme in any case (Client4 sends "BEARER").
    if (req.headers.authorization?.replace(/^bearer /i, "") !== BOT_TOKEN) {
      return appError(
        res,
        401,
        "api.context.session_expired.app_error",
        "Invalid or expired session, please login again.",
      );
    }
    const route = `${method} ${path.replace(/\/[a-z0-9]{26}(?=\/|$)/g, "/:id")}`;
    const fault = faults.get(route)?.shift();
    if (fault) {
      if (fault.text !== undefined) {
        res.writeHead(fault.status, { "Content-Type": "text/plain; charset=utf-8", ...fault.headers });
        return res.end(fault.text);
      }
      return json(
        res,
        fault.status,
        fault.body ?? { message: "fault", status_code: fault.status },
        fault.headers,
      );
    }
    const [, id, sub] = /^[a-z/]+?\/([a-z0-9]{26})(?:\/(\w+))?$/.exec(path) ?? [];
    if (method === "GET" && path === "users/me")
      return json(res, 200, { ...users.get(BOT_ID), is_bot: true });
    if (method === "GET" && path.startsWith("users/") && id) {
      const user = users.get(id);
      return user
        ? json(res, 200, user)
        : appError(res, 404, "app.user.missing_account.const", "Unable to find the user.");
    }
    if (method === "GET" && path.startsWith("channels/") && id && sub === "posts") {
      if (!channels.has(id)) {
        return appError(
          res,
          403,
          "api.context.permissions.app_error",
          "You do not have the appropriate permissions.",
        );
      }
      const since = Number(url.searchParams.get("since") ?? 0);
      const list = posts.filter((p) => p.channel_id === id && Math.max(p.update_at, p.delete_at) > since);
      return json(res, 200, {
        order: list.map((p) => p.id).reverse(),
        posts: Object.fromEntries(list.map((p) => [p.id, p])),
        next_post_id: "",
        prev_post_id: "",
      });
    }
    if (method === "GET" && path.startsWith("channels/") && id) {
      const channel = channels.get(id);
      return channel
        ? json(res, 200, { id, type: channel.type, name: channel.name, display_name: channel.name })
        : appError(res, 404, "app.channel.get.existing.app_error", "Unable to find the existing channel.");
    }
    if (method === "POST" && path === "users/me/typing") return json(res, 200, { status: "OK" });
    if (method === "POST" && path === "posts") {
      const channelId = String(body?.["channel_id"] ?? "");
      if (!channels.has(channelId)) {
        return appError(
          res,
          403,
          "api.context.permissions.app_error",
          "You do not have the appropriate permissions.",
        );
      }
      const message = String(body?.["message"] ?? "");
      if ([...message].length > 16383) {
        return appError(
          res,
          400,
          "model.post.is_valid.message_length.app_error",
          "Invalid Message property length.",
        );
      }
      const post = makePost(
        BOT_ID,
        channelId,
        message,
        String(body?.["root_id"] ?? ""),
        (body?.["file_ids"] as string[]) ?? [],
      );
      broadcastPost(post);
      return json(res, 201, post);
    }
    if (path.startsWith("posts/") && id) {
      const post = posts.find((p) => p.id === id && p.delete_at === 0);
      if (!post) return appError(res, 404, "app.post.get.app_error", "Unable to get the post.");
      if (method === "PUT") {
        if (body?.["id"] !== id)
          return appError(
            res,
            400,
            "api.context.invalid_body_param.app_error",
            "Invalid or missing post in request body.",
          );
        post.message = String(body?.["message"] ?? "");
        post.update_at = ++clock;
        return json(res, 200, post);
      }
      if (method === "DELETE") {
        post.delete_at = ++clock;
        return json(res, 200, { status: "OK" });
      }
    }
    if (method === "POST" && path === "files") {
      const form = await new Request("http://x/", {
        method: "POST",
        headers: { "content-type": String(req.headers["content-type"] ?? "") },
        body: new Uint8Array(raw),
      }).formData();
      const channelId = String(form.get("channel_id") ?? "");
      if (!channels.has(channelId)) {
        return appError(
          res,
          403,
          "api.context.permissions.app_error",
          "You do not have the appropriate permissions.",
        );
      }
      const infos = [];
      for (const entry of form.getAll("files")) {
        if (typeof entry === "string") continue;
        const bytes = Buffer.from(await entry.arrayBuffer());
        const file: FakeFile = {
          id: newId(),
          name: entry.name,
          size: bytes.length,
          mime_type: entry.type,
          bytes,
          channel_id: channelId,
        };
        files.set(file.id, file);
        infos.push(infoOf(file));
      }
      return json(res, 201, { file_infos: infos, client_ids: [] });
    }
    if (method === "GET" && path.startsWith("files/") && id) {
      const file = files.get(id);
      if (!file) return appError(res, 404, "app.file_info.get.app_error", "Unable to get the file info.");
      if (sub === "info") return json(res, 200, infoOf(file));
      res.writeHead(200, { "Content-Type": file.mime_type, "Content-Length": String(file.size) });
      return res.end(file.bytes);
    }
    appError(res, 404, "api.context.404.app_error", `Sorry, we could not find the page (${method} ${path}).`);
  };

  const infoOf = (f: FakeFile) => ({
    id: f.id,
    name: f.name,
    size: f.size,
    mime_type: f.mime_type,
    extension: f.name.split(".").pop() ?? "",
  });

  const makePost = (
    userId: string,
    channelId: string,
    message: string,
    rootId: string,
    fileIds: string[],
  ): FakePost => {
    const now = ++clock;
    const post: FakePost = {
      id: newId(),
      channel_id: channelId,
      user_id: userId,
      root_id: rootId,
      message,
      file_ids: fileIds,
      create_at: now,
      update_at: now,
      delete_at: 0,
      type: "",
      props: userId === BOT_ID ? { from_bot: "true" } : {},
    };
    const infos = fileIds.flatMap((f) => (files.has(f) ? [infoOf(files.get(f)!)] : []));
    if (infos.length) (post as FakePost & { metadata?: unknown }).metadata = { files: infos };
    posts.push(post);
    return post;
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      res.writeHead(500, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ message: String(err), status_code: 500 }));
    });
  });
  // Pongs by hand, so a test can make a connection go silent.
  const wss = new WebSocketServer({ noServer: true, autoPong: false });
  const frozen = new WeakSet<WebSocket>();
  server.on("upgrade", (req, socket, head) => {
    if (!req.url?.startsWith("/api/v4/websocket")) {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      connections++;
      ws.on("ping", (data) => {
        if (!frozen.has(ws)) ws.pong(data);
      });
      ws.on("message", (raw) => {
        const msg = JSON.parse(String(raw)) as {
          seq: number;
          action: string;
          data?: Record<string, unknown>;
        };
        if (msg.action === "authentication_challenge") {
          if (msg.data?.["token"] !== BOT_TOKEN || fake.refuseSocketAuth) {
            ws.send(
              JSON.stringify({
                status: "FAIL",
                seq_reply: msg.seq,
                error: { id: "api.web_socket_router.not_authenticated.app_error" },
              }),
            );
            ws.close(1008);
            return;
          }
          ws.send(JSON.stringify({ status: "OK", seq_reply: msg.seq }));
          sockets.add(ws);
          send(ws, {
            event: "hello",
            data: { connection_id: newId(), server_version: "10.5.0.fake" },
            broadcast: {},
          });
          return;
        }
        ws.send(JSON.stringify({ status: "OK", seq_reply: msg.seq }));
      });
      ws.on("close", () => sockets.delete(ws));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;

  const fake: FakeMattermost = {
    url: `http://127.0.0.1:${port}`,
    refuseSocketAuth: false,
    posts,
    files,
    calls,
    channels,
    users,
    get connections() {
      return connections;
    },
    get openSockets() {
      return sockets.size;
    },
    addUser: (id, username) => users.set(id, { id, username }),
    addChannel: (id, type, name = id) => channels.set(id, { id, type, name }),
    userPost(input) {
      const post = makePost(input.from, input.channel, input.text, input.rootId ?? "", input.fileIds ?? []);
      broadcastPost(post);
      return post.id;
    },
    addFile(channel, name, mimeType, bytes) {
      const file: FakeFile = {
        id: newId(),
        name,
        size: bytes.length,
        mime_type: mimeType,
        bytes,
        channel_id: channel,
      };
      files.set(file.id, file);
      return file.id;
    },
    pushRaw(frame) {
      for (const ws of sockets) ws.send(JSON.stringify(frame));
    },
    botPostsIn: (channel) =>
      posts.filter((p) => p.user_id === BOT_ID && p.channel_id === channel && p.delete_at === 0),
    fault(route, fault) {
      faults.set(route, [...(faults.get(route) ?? []), fault]);
    },
    freezeSockets() {
      for (const ws of sockets) frozen.add(ws);
    },
    dropSockets() {
      for (const ws of sockets) ws.terminate();
      sockets.clear();
    },
    async close() {
      for (const ws of wss.clients) ws.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}
