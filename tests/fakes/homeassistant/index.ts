/**
 * A fake Home Assistant on 127.0.0.1 speaking its real wire protocols.
 *
 * WebSocket `/api/websocket`: `auth_required` on connect; `auth` with the token → `auth_ok`, or
 * `auth_invalid` and the socket closed (any other message before auth closes it too); then commands
 * with ids, each answered by a `result` frame of the same id (`success`, `result` or `error: {code,
 * message}`): `supported_features`, `get_states`, `get_services`, `get_config`, `call_service`
 * (lights, switches, locks, covers change state; a `state_changed` event goes to every subscription),
 * `subscribe_events` / `unsubscribe_events` (events as `{id, type: "event", event}` frames), `ping` →
 * `pong`, and the registries `config/entity_registry/list`, `config/device_registry/list`,
 * `config/area_registry/list`. An unknown command answers `unknown_command`; an unknown service
 * `not_found`.
 *
 * REST: `GET /api/` → `{"message": "API running."}` with a good bearer token, 401 otherwise;
 * `POST /api/services/<domain>/<service>` (the same services; an unknown one 400). Faults can be
 * queued for the next REST call. Everything received is recorded.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";

export const HA_TOKEN = "ha-long-lived-token-0123456789";
export const HA_VERSION = "2025.6.1";

/** An entity as the fake holds it. */
export interface FakeEntity {
  entity_id: string;
  state: string;
  attributes: Record<string, unknown>;
  area?: string | undefined;
}

/** A service call the fake received (over the WebSocket or REST). */
export interface FakeCall {
  via: "ws" | "rest";
  domain: string;
  service: string;
  data: Record<string, unknown>;
  target: Record<string, unknown>;
}

/** A fault answered instead of the next REST call. */
export interface HaFault {
  status: number;
  body?: unknown;
  /** Sent as `Retry-After` (a proxy's rate limit). */
  retryAfterS?: number;
}

const AREAS = [
  { area_id: "kitchen", name: "Kitchen" },
  { area_id: "hall", name: "Hall" },
  { area_id: "garage", name: "Garage" },
];

/** The house every fake starts with. */
export function defaultEntities(): FakeEntity[] {
  return [
    {
      entity_id: "light.kitchen",
      state: "off",
      attributes: { friendly_name: "Kitchen Light" },
      area: "kitchen",
    },
    { entity_id: "light.hall", state: "on", attributes: { friendly_name: "Hall Light" }, area: "hall" },
    { entity_id: "switch.kettle", state: "off", attributes: { friendly_name: "Kettle" }, area: "kitchen" },
    {
      entity_id: "sensor.kitchen_temperature",
      state: "21.5",
      attributes: {
        friendly_name: "Kitchen Temperature",
        unit_of_measurement: "°C",
        device_class: "temperature",
      },
      area: "kitchen",
    },
    {
      entity_id: "lock.front_door",
      state: "locked",
      attributes: { friendly_name: "Front Door" },
      area: "hall",
    },
    {
      entity_id: "cover.garage_door",
      state: "closed",
      attributes: { friendly_name: "Garage Door", device_class: "garage" },
      area: "garage",
    },
    {
      entity_id: "cover.kitchen_blind",
      state: "closed",
      attributes: { friendly_name: "Kitchen Blind", device_class: "blind" },
      area: "kitchen",
    },
  ];
}

const field = (description: string, required = false) => ({ description, required, selector: {} });

/** What `get_services` answers (a small real-shaped subset). */
const SERVICES: Record<
  string,
  Record<string, { name: string; description: string; fields: object; target?: object }>
> = {
  light: {
    turn_on: {
      name: "Turn on",
      description: "Turns on one or more lights.",
      fields: { brightness_pct: field("Brightness in percent"), color_name: field("A color name") },
      target: { entity: [{ domain: ["light"] }] },
    },
    turn_off: {
      name: "Turn off",
      description: "Turns off lights.",
      fields: {},
      target: { entity: [{ domain: ["light"] }] },
    },
    toggle: {
      name: "Toggle",
      description: "Toggles lights.",
      fields: {},
      target: { entity: [{ domain: ["light"] }] },
    },
  },
  switch: {
    turn_on: { name: "Turn on", description: "Turns a switch on.", fields: {} },
    turn_off: { name: "Turn off", description: "Turns a switch off.", fields: {} },
  },
  lock: {
    lock: { name: "Lock", description: "Locks a lock.", fields: { code: field("An optional code") } },
    unlock: { name: "Unlock", description: "Unlocks a lock.", fields: { code: field("An optional code") } },
  },
  cover: {
    open_cover: { name: "Open", description: "Opens a cover.", fields: {} },
    close_cover: { name: "Close", description: "Closes a cover.", fields: {} },
  },
  homeassistant: {
    turn_on: { name: "Generic turn on", description: "Turns on any entity.", fields: {} },
    turn_off: { name: "Generic turn off", description: "Turns off any entity.", fields: {} },
  },
  persistent_notification: {
    create: {
      name: "Create",
      description: "Shows a notification in the sidebar.",
      fields: { message: field("Message body", true), title: field("Title"), notification_id: field("Id") },
    },
  },
  notify: {
    mobile_app_phone: {
      name: "Phone",
      description: "Sends a push message.",
      fields: { message: field("Message", true) },
    },
  },
};

/** How a service changes its target entity's state. */
const EFFECTS: Record<string, string> = {
  turn_on: "on",
  turn_off: "off",
  lock: "locked",
  unlock: "unlocked",
  open_cover: "open",
  close_cover: "closed",
};

export interface FakeHomeAssistant {
  /** `http://127.0.0.1:<port>` (HOMEASSISTANT_URL). */
  url: string;
  entities: FakeEntity[];
  calls: FakeCall[];
  /** Every WebSocket message received after auth, in order. */
  received: Record<string, unknown>[];
  /** Tokens offered in `auth` messages (good or not). */
  authAttempts: string[];
  /** Notifications created (`persistent_notification.create` and `notify.*` over REST). */
  notifications: { service: string; message: string; title?: string | undefined; id?: string | undefined }[];
  /** Answers the next REST call with this fault. */
  fault(fault: HaFault): void;
  /** Sets an entity's state as a device would, with a `state_changed` event to subscribers. */
  setState(entityId: string, state: string): void;
  /** Drops every open WebSocket (a restart of Home Assistant). */
  dropSockets(): void;
  close(): Promise<void>;
}

/** Starts a fake Home Assistant. */
export async function startFakeHomeAssistant(options: { token?: string } = {}): Promise<FakeHomeAssistant> {
  const token = options.token ?? HA_TOKEN;
  const entities = defaultEntities();
  const calls: FakeCall[] = [];
  const received: Record<string, unknown>[] = [];
  const authAttempts: string[] = [];
  const notifications: FakeHomeAssistant["notifications"] = [];
  const faults: HaFault[] = [];
  /** Open subscriptions: socket → subscription id → event type (undefined: all). */
  const subscriptions = new Map<WebSocket, Map<number, string | undefined>>();

  const stateOf = (e: FakeEntity) => ({
    entity_id: e.entity_id,
    state: e.state,
    attributes: e.attributes,
    last_changed: "2025-06-01T10:00:00+00:00",
    last_updated: "2025-06-01T10:00:00+00:00",
    context: { id: "01JXCONTEXT", parent_id: null, user_id: null },
  });

  const setState = (entityId: string, state: string) => {
    const entity = entities.find((e) => e.entity_id === entityId);
    if (!entity) return;
    const old = stateOf(entity);
    entity.state = state;
    const event = {
      event_type: "state_changed",
      data: { entity_id: entityId, old_state: old, new_state: stateOf(entity) },
      origin: "LOCAL",
      time_fired: new Date().toISOString(),
      context: { id: randomUUID(), parent_id: null, user_id: null },
    };
    for (const [socket, subs] of subscriptions)
      for (const [id, type] of subs)
        if (type === undefined || type === "state_changed")
          socket.send(JSON.stringify({ id, type: "event", event }));
  };

  /** Runs a service call; an error `{code, message}` or undefined. */
  const call = (c: FakeCall): { code: string; message: string } | undefined => {
    if (!SERVICES[c.domain]?.[c.service])
      return { code: "not_found", message: `Service ${c.domain}.${c.service} not found.` };
    calls.push(c);
    if (c.domain === "persistent_notification" || c.domain === "notify") {
      notifications.push({
        service: `${c.domain}.${c.service}`,
        message: String(c.data["message"] ?? ""),
        title: c.data["title"] === undefined ? undefined : String(c.data["title"]),
        id: c.data["notification_id"] === undefined ? undefined : String(c.data["notification_id"]),
      });
      return undefined;
    }
    const raw = c.target["entity_id"] ?? c.data["entity_id"];
    const targets = typeof raw === "string" ? [raw] : Array.isArray(raw) ? raw.map(String) : [];
    const area = c.target["area_id"];
    if (typeof area === "string")
      targets.push(...entities.filter((e) => e.area === area).map((e) => e.entity_id));
    const next = c.service === "toggle" ? undefined : EFFECTS[c.service];
    for (const id of targets) {
      const entity = entities.find((e) => e.entity_id === id);
      if (!entity) continue;
      if (c.domain !== "homeassistant" && !id.startsWith(`${c.domain}.`)) continue;
      setState(id, next ?? (entity.state === "on" ? "off" : "on"));
    }
    return undefined;
  };

  const registries: Record<string, () => unknown> = {
    "config/area_registry/list": () => AREAS,
    "config/device_registry/list": () => [],
    "config/entity_registry/list": () =>
      entities.map((e) => ({ entity_id: e.entity_id, area_id: e.area ?? null, device_id: null })),
  };

  const command = (socket: WebSocket, msg: Record<string, unknown>) => {
    const id = msg["id"];
    const ok = (result: unknown) =>
      socket.send(JSON.stringify({ id, type: "result", success: true, result }));
    const fail = (code: string, message: string) =>
      socket.send(JSON.stringify({ id, type: "result", success: false, error: { code, message } }));
    if (typeof id !== "number") return fail("invalid_format", "Message incorrectly formatted.");
    const type = String(msg["type"]);
    if (type === "ping") return void socket.send(JSON.stringify({ id, type: "pong" }));
    if (type === "supported_features") return ok(null);
    if (type === "get_states") return ok(entities.map(stateOf));
    if (type === "get_services") return ok(SERVICES);
    if (type === "get_config")
      return ok({ version: HA_VERSION, location_name: "Fake Home", state: "RUNNING" });
    if (registries[type]) return ok(registries[type]!());
    if (type === "subscribe_events") {
      const event = typeof msg["event_type"] === "string" ? msg["event_type"] : undefined;
      subscriptions.get(socket)?.set(id, event);
      return ok(null);
    }
    if (type === "unsubscribe_events") {
      const sub = Number(msg["subscription"]);
      if (!subscriptions.get(socket)?.delete(sub)) return fail("not_found", "Subscription not found.");
      return ok(null);
    }
    if (type === "call_service") {
      const error = call({
        via: "ws",
        domain: String(msg["domain"]),
        service: String(msg["service"]),
        data: (msg["service_data"] as Record<string, unknown>) ?? {},
        target: (msg["target"] as Record<string, unknown>) ?? {},
      });
      if (error) return fail(error.code, error.message);
      return ok({ context: { id: randomUUID(), parent_id: null, user_id: "fake-user" }, response: null });
    }
    return fail("unknown_command", "Unknown command.");
  };

  const wss = new WebSocketServer({ noServer: true });
  wss.on("connection", (socket) => {
    let authed = false;
    socket.send(JSON.stringify({ type: "auth_required", ha_version: HA_VERSION }));
    socket.on("message", (raw) => {
      let msg: Record<string, unknown>;
      try {
        msg = JSON.parse(String(raw)) as Record<string, unknown>;
      } catch {
        socket.close();
        return;
      }
      if (!authed) {
        if (msg["type"] !== "auth") return void socket.close();
        authAttempts.push(String(msg["access_token"]));
        if (msg["access_token"] !== token) {
          socket.send(JSON.stringify({ type: "auth_invalid", message: "Invalid access token or password" }));
          socket.close();
          return;
        }
        authed = true;
        subscriptions.set(socket, new Map());
        socket.send(JSON.stringify({ type: "auth_ok", ha_version: HA_VERSION }));
        return;
      }
      received.push(msg);
      command(socket, msg);
    });
    socket.on("close", () => subscriptions.delete(socket));
  });

  const rest = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const json = (status: number, body: unknown, headers: Record<string, string> = {}): void => {
      res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
    };
    if (req.headers.authorization !== `Bearer ${token}`)
      return void res.writeHead(401).end("401: Unauthorized");
    const fault = faults.shift();
    if (fault)
      return json(
        fault.status,
        fault.body ?? { message: "fault" },
        fault.retryAfterS ? { "retry-after": String(fault.retryAfterS) } : {},
      );
    const path = (req.url ?? "/").split("?")[0]!;
    if (req.method === "GET" && path === "/api/") return json(200, { message: "API running." });
    const svc = /^\/api\/services\/([a-z0-9_]+)\/([a-z0-9_]+)$/.exec(path);
    if (req.method === "POST" && svc) {
      let body = "";
      for await (const chunk of req) body += String(chunk);
      let data: Record<string, unknown>;
      try {
        data = body ? (JSON.parse(body) as Record<string, unknown>) : {};
      } catch {
        return json(400, { message: "Data should be valid JSON." });
      }
      const error = call({ via: "rest", domain: svc[1]!, service: svc[2]!, data, target: {} });
      if (error) return json(400, { message: error.message });
      return json(200, []);
    }
    json(404, { message: "Not found" });
  };

  const server = createServer((req, res) => {
    rest(req, res).catch(() => res.writeHead(500).end());
  });
  server.on("upgrade", (req, socket, head) => {
    if (req.url !== "/api/websocket") return void socket.destroy();
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit("connection", ws, req));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    entities,
    calls,
    received,
    authAttempts,
    notifications,
    fault: (f) => void faults.push(f),
    setState,
    dropSockets: () => {
      for (const socket of wss.clients) socket.terminate();
    },
    close: async () => {
      for (const socket of wss.clients) socket.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
