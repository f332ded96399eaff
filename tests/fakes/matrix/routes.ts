/**
 * The Client-Server API endpoints the fake homeserver serves: what matrix-js-sdk calls at start
 * (`versions`, `pushrules`, `capabilities`, `filter`), login and whoami, the long-polled `sync`, sending
 * with transaction ids (same txnId from the same device → same event, no second one, like Synapse),
 * redactions, typing, join, leave, profile and media.
 */
import type { HomeserverState } from "./state.js";
import { sync } from "./sync.js";
import type { TypingCall } from "./types.js";

export interface RouteContext {
  method: string;
  path: string;
  query: Record<string, string>;
  body: Record<string, unknown>;
  rawBody: Buffer;
  contentType?: string | undefined;
  token: string | undefined;
  /** The token's user, when valid. */
  user: { userId: string; deviceId: string } | undefined;
}

export type RouteResult =
  | { status: number; json: unknown }
  | { status: number; bytes: Buffer; contentType: string }
  | { hold: (done: (result: RouteResult) => void) => void };

export interface RouteDeps {
  state: HomeserverState;
  botUserId: string;
  botPassword: string;
  typing: TypingCall[];
  media: Map<string, { bytes: Buffer; contentType: string }>;
  /** Waits until the state changes or `ms` pass. */
  waitForChange(ms: number): Promise<void>;
  /** True once the server is closing: held polls answer at once. */
  isClosed(): boolean;
  maxSyncHoldMs: number;
}

const err = (status: number, errcode: string, error: string): RouteResult => ({
  status,
  json: { errcode, error },
});

const ok = (json: unknown = {}): RouteResult => ({ status: 200, json });

const PUBLIC = [
  /^\/_matrix\/client\/versions$/,
  /^\/_matrix\/client\/v3\/login$/,
  /^\/_matrix\/client\/v3\/profile\//,
];

/** Routes one request. Returns undefined for an unknown endpoint (the server answers 404 M_UNRECOGNIZED). */
export function route(ctx: RouteContext, deps: RouteDeps): RouteResult | undefined {
  const { method, path } = ctx;
  if (!PUBLIC.some((re) => re.test(path)) && !ctx.user) {
    return ctx.token
      ? err(401, "M_UNKNOWN_TOKEN", "Invalid access token passed.")
      : err(401, "M_MISSING_TOKEN", "Missing access token.");
  }
  for (const [verb, pattern, handler] of ROUTES) {
    if (verb !== "*" && verb !== method) continue;
    const match = pattern.exec(path);
    if (match) return handler(ctx, deps, match.slice(1));
  }
  return undefined;
}

type Handler = (ctx: RouteContext, deps: RouteDeps, params: string[]) => RouteResult;

const C = "/_matrix/client/v3";
const ID = "([^/]+)";
const re = (tail: string) => new RegExp(`^${C.replace(/\//g, "\\/")}${tail}$`);

/** Method ("*": any), path pattern, handler with the pattern's groups. */
const ROUTES: [string, RegExp, Handler][] = [
  [
    "GET",
    /^\/_matrix\/client\/versions$/,
    () => ok({ versions: ["v1.1", "v1.5", "v1.11", "v1.12"], unstable_features: {} }),
  ],
  ["GET", re("/login"), () => ok({ flows: [{ type: "m.login.password" }] })],
  ["POST", re("/login"), (ctx, deps) => login(ctx, deps)],
  ["GET", re("/account/whoami"), (ctx) => ok({ user_id: ctx.user!.userId, device_id: ctx.user!.deviceId })],
  [
    "GET",
    re("/pushrules/"),
    () => ok({ global: { override: [], content: [], room: [], sender: [], underride: [] } }),
  ],
  ["GET", re("/capabilities"), () => ok({ capabilities: { "m.change_password": { enabled: true } } })],
  [
    "POST",
    re(`/user/${ID}/filter`),
    (ctx, { state }) => {
      const id = String(state.filters.size + 1);
      state.filters.set(id, ctx.body);
      return ok({ filter_id: id });
    },
  ],
  [
    "GET",
    re(`/user/${ID}/filter/${ID}`),
    (_ctx, { state }, [, id]) => {
      const f = state.filters.get(id!);
      return f ? ok(f) : err(404, "M_NOT_FOUND", "No such filter");
    },
  ],
  [
    "PUT",
    re(`/user/${ID}/account_data/${ID}`),
    (ctx, { state }, [, type]) => {
      state.setAccountData(type!, ctx.body);
      return ok();
    },
  ],
  ["GET", re("/sync"), (ctx, deps) => sync(ctx, deps)],
  ["POST", re("/keys/upload"), (ctx, { state }) => state.keys.upload(ctx)],
  ["POST", re("/keys/query"), (ctx, { state }) => state.keys.query(ctx)],
  ["POST", re("/keys/claim"), (ctx, { state }) => state.keys.claim(ctx)],
  ["PUT", re(`/sendToDevice/${ID}/${ID}`), (ctx, { state }, [type]) => state.keys.send(ctx, type!)],
  ["GET", re("/room_keys/version"), () => err(404, "M_NOT_FOUND", "No current backup version")],
  [
    "PUT",
    re(`/rooms/${ID}/send/${ID}/${ID}`),
    (ctx, deps, [room, type, txn]) => send(ctx, deps, room!, type!, txn!),
  ],
  [
    "PUT",
    re(`/rooms/${ID}/redact/${ID}/${ID}`),
    (ctx, deps, [room, target, txn]) => send(ctx, deps, room!, "m.room.redaction", txn!, target),
  ],
  [
    "PUT",
    re(`/rooms/${ID}/typing/${ID}`),
    (ctx, deps, [room]) => {
      const timeout = ctx.body["timeout"];
      deps.typing.push({
        roomId: room!,
        typing: ctx.body["typing"] === true,
        timeoutMs: typeof timeout === "number" ? timeout : undefined,
      });
      return ok();
    },
  ],
  ["POST", re(`/join/${ID}`), (ctx, deps, [room]) => membershipChange(deps, room!, ctx.user!.userId, "join")],
  [
    "POST",
    re(`/rooms/${ID}/join`),
    (ctx, deps, [room]) => membershipChange(deps, room!, ctx.user!.userId, "join"),
  ],
  [
    "POST",
    re(`/rooms/${ID}/leave`),
    (ctx, deps, [room]) => membershipChange(deps, room!, ctx.user!.userId, "leave"),
  ],
  [
    "GET",
    re(`/rooms/${ID}/event/${ID}`),
    (ctx, { state }, [room, eventId]) => {
      const ev = state.rooms.get(room!)?.find((e) => e.event_id === eventId);
      return ev
        ? ok({ ...state.wire(ev, ctx.token ?? ""), room_id: ev.roomId })
        : err(404, "M_NOT_FOUND", "Event not found");
    },
  ],
  [
    "GET",
    re(`/rooms/${ID}/members`),
    (ctx, { state }, [room]) =>
      ok({
        chunk: [...state.stateAt(room!).values()]
          .filter((e) => e.type === "m.room.member")
          .map((e) => state.wire(e, ctx.token ?? "")),
      }),
  ],
  [
    "GET",
    re(`/profile/${ID}(?:/displayname)?`),
    (_ctx, { state }, [userId]) => {
      const name = state.displayNames.get(userId!);
      return name === undefined ? err(404, "M_NOT_FOUND", "Profile not found") : ok({ displayname: name });
    },
  ],
  [
    "POST",
    /^\/_matrix\/media\/v3\/upload$/,
    (ctx, { media, state }) => {
      const id = `m${media.size + 1}`;
      media.set(id, { bytes: ctx.rawBody, contentType: ctx.contentType ?? "application/octet-stream" });
      return ok({ content_uri: `mxc://${state.serverName}/${id}` });
    },
  ],
  [
    "GET",
    /^\/_matrix\/client\/v1\/media\/download\/([^/]+)\/([^/]+)/,
    (_ctx, { media }, [, id]) => {
      const item = media.get(id!);
      return item
        ? { status: 200, bytes: item.bytes, contentType: item.contentType }
        : err(404, "M_NOT_FOUND", "Not found");
    },
  ],
];

function login(ctx: RouteContext, deps: RouteDeps): RouteResult {
  const body = ctx.body;
  const identifier = body["identifier"] as { user?: string } | undefined;
  const userRaw = identifier?.user ?? (body["user"] as string | undefined) ?? "";
  const userId = userRaw.startsWith("@") ? userRaw : `@${userRaw}:${deps.state.serverName}`;
  if (
    body["type"] !== "m.login.password" ||
    userId !== deps.botUserId ||
    body["password"] !== deps.botPassword
  ) {
    return err(403, "M_FORBIDDEN", "Invalid username or password");
  }
  const deviceId =
    typeof body["device_id"] === "string" ? body["device_id"] : `DEV${deps.state.tokens.size + 1}`;
  const token = `syt_login_${deps.state.tokens.size + 1}_${Date.now().toString(36)}`;
  deps.state.tokens.set(token, { userId, deviceId });
  return ok({
    user_id: userId,
    access_token: token,
    device_id: deviceId,
    home_server: deps.state.serverName,
  });
}

function send(
  ctx: RouteContext,
  deps: RouteDeps,
  roomId: string,
  type: string,
  txnId: string,
  redacts?: string,
): RouteResult {
  const { state } = deps;
  const user = ctx.user!;
  const key = `${ctx.token}|${roomId}|${txnId}`;
  const existing = state.txns.get(key);
  if (existing) return ok({ event_id: existing });
  if (state.membership(roomId, user.userId)?.membership !== "join") {
    return err(403, "M_FORBIDDEN", `User ${user.userId} not in room ${roomId}`);
  }
  const content = redacts ? { ...ctx.body, redacts } : ctx.body;
  const ev = state.append(roomId, { type, sender: user.userId, content, txnId });
  state.txns.set(key, ev.event_id);
  state.sent.push({ roomId, eventId: ev.event_id, type, txnId, content });
  return ok({ event_id: ev.event_id });
}

function membershipChange(
  deps: RouteDeps,
  roomId: string,
  userId: string,
  to: "join" | "leave",
): RouteResult {
  const { state } = deps;
  const current = state.membership(roomId, userId)?.membership;
  if (!state.rooms.has(roomId)) return err(404, "M_NOT_FOUND", "Unknown room");
  if (to === "join" && current !== "invite" && current !== "join") {
    return err(403, "M_FORBIDDEN", "You are not invited to this room.");
  }
  if (current !== to) {
    const displayname = state.displayNames.get(userId);
    state.append(roomId, {
      type: "m.room.member",
      state_key: userId,
      sender: userId,
      content: { membership: to, ...(to === "join" && displayname ? { displayname } : {}) },
    });
  }
  return ok(to === "join" ? { room_id: roomId } : {});
}
