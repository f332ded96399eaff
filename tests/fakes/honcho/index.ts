/**
 * A fake Honcho API (v3, as `@honcho-ai/sdk` 2.5 speaks it) on 127.0.0.1: workspaces, peers and sessions
 * by get-or-create, messages added to and listed from a session, and the dialectic `peers/{id}/chat`
 * answering what a test told it the peer is known for (with `learns`, otherwise what the peer said in that
 * workspace, as Honcho's conclusions come only from a workspace's own messages). Bearer key checked (401 otherwise); an outage
 * (`down`) answers 503 to everything, `slow` holds chat answers. Every request is recorded.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request as the fake saw it. */
export interface HonchoRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  body: unknown;
}

/** A message as stored. */
export interface HonchoMessage {
  id: string;
  content: string;
  peer_id: string;
  session_id: string;
  workspace_id: string;
  metadata: Record<string, unknown>;
  created_at: string;
  token_count: number;
}

export interface FakeHoncho {
  /** `http://127.0.0.1:<port>` */
  url: string;
  requests: HonchoRequest[];
  /** Peers by workspace, with their configuration. */
  peers(workspace: string): Map<string, Record<string, unknown>>;
  /** Sessions of a workspace, each with its peers' session configuration. */
  sessions(workspace: string): Map<string, { peers: Record<string, unknown>; metadata: unknown }>;
  /** Messages of a workspace's session, in order. */
  messages(workspace: string, session: string): HonchoMessage[];
  /** What the dialectic answers about `peer` (in `workspace`, else in every one; undefined: `content: null`). */
  know(peer: string, text: string | undefined, workspace?: string): void;
  /** Every request answers `status` until `up()`. */
  down(status?: number): void;
  up(): void;
  /** Chat answers wait `ms` first. */
  slow(ms: number): void;
  close(): Promise<void>;
}

interface Workspace {
  peers: Map<string, Record<string, unknown>>;
  sessions: Map<string, { peers: Record<string, unknown>; metadata: unknown; messages: HonchoMessage[] }>;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? (JSON.parse(text) as unknown) : undefined;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

const ID = /^[A-Za-z0-9_-]{1,512}$/;

/** Starts the fake; `apiKey` set: requests need `Authorization: Bearer <apiKey>`. */
export async function startFakeHoncho(
  options: { apiKey?: string; learns?: boolean } = {},
): Promise<FakeHoncho> {
  const requests: HonchoRequest[] = [];
  const workspaces = new Map<string, Workspace>();
  const knowledge = new Map<string, string | undefined>();
  let outage: number | undefined;
  let chatDelayMs = 0;
  const now = () => new Date().toISOString();
  const workspace = (id: string) => {
    const known = workspaces.get(id);
    if (known) return known;
    const made: Workspace = { peers: new Map(), sessions: new Map() };
    workspaces.set(id, made);
    return made;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://fake");
    const body = await readJson(req).catch(() => undefined);
    const path = url.pathname;
    requests.push({ method: req.method ?? "", path, authorization: req.headers.authorization, body });
    if (outage) return send(res, outage, { detail: "Service unavailable" });
    if (options.apiKey && req.headers.authorization !== `Bearer ${options.apiKey}`)
      return send(res, 401, { detail: "Invalid API key" });
    const b = (body ?? {}) as Record<string, unknown>;
    if (req.method === "POST" && path === "/v3/workspaces") {
      if (typeof b["id"] !== "string" || !ID.test(b["id"])) return send(res, 422, { detail: "invalid id" });
      workspace(b["id"]);
      return send(res, 200, { id: b["id"], metadata: {}, configuration: {}, created_at: now() });
    }
    const m = path.match(/^\/v3\/workspaces\/([^/]+)\/(.*)$/);
    if (!m || req.method !== "POST") return send(res, 404, { detail: "Not Found" });
    const wsId = decodeURIComponent(m[1]!);
    const w = workspaces.get(wsId);
    if (!w) return send(res, 404, { detail: `Workspace ${wsId} not found` });
    const rest = m[2]!;
    if (rest === "peers") {
      const id = b["id"];
      if (typeof id !== "string" || !ID.test(id)) return send(res, 422, { detail: "invalid peer id" });
      const configuration = (b["configuration"] ?? w.peers.get(id) ?? {}) as Record<string, unknown>;
      w.peers.set(id, configuration);
      return send(res, 200, {
        id,
        workspace_id: wsId,
        metadata: b["metadata"] ?? {},
        configuration,
        created_at: now(),
      });
    }
    if (rest === "sessions") {
      const id = b["id"];
      if (typeof id !== "string" || !ID.test(id)) return send(res, 422, { detail: "invalid session id" });
      const session = w.sessions.get(id) ?? { peers: {}, metadata: b["metadata"] ?? {}, messages: [] };
      const peers = (b["peers"] ?? {}) as Record<string, unknown>;
      for (const [peer, config] of Object.entries(peers)) {
        if (!w.peers.has(peer)) w.peers.set(peer, {});
        session.peers[peer] = config;
      }
      w.sessions.set(id, session);
      const answer = {
        id,
        workspace_id: wsId,
        is_active: true,
        metadata: session.metadata,
        configuration: {},
      };
      return send(res, 200, { ...answer, created_at: now() });
    }
    const s = rest.match(/^sessions\/([^/]+)\/(messages|messages\/list|peers)$/);
    if (s) {
      const session = w.sessions.get(decodeURIComponent(s[1]!));
      if (!session) return send(res, 404, { detail: "Session not found" });
      if (s[2] === "peers") {
        for (const [peer, config] of Object.entries(b)) session.peers[peer] = config;
        return send(res, 200, {});
      }
      if (s[2] === "messages/list") {
        const items = session.messages;
        return send(res, 200, { items, total: items.length, page: 1, size: 50, pages: 1 });
      }
      const list = Array.isArray(b["messages"]) ? (b["messages"] as Record<string, unknown>[]) : undefined;
      if (!list?.length) return send(res, 422, { detail: "messages required" });
      const made = list.map((msg) => ({
        id: randomUUID(),
        content: String(msg["content"] ?? ""),
        peer_id: String(msg["peer_id"] ?? ""),
        session_id: decodeURIComponent(s[1]!),
        workspace_id: wsId,
        metadata: (msg["metadata"] ?? {}) as Record<string, unknown>,
        created_at: typeof msg["created_at"] === "string" ? msg["created_at"] : now(),
        token_count: String(msg["content"] ?? "").split(/\s+/).length,
      }));
      session.messages.push(...made);
      return send(res, 200, made);
    }
    const chat = rest.match(/^peers\/([^/]+)\/chat$/);
    if (chat) {
      const peer = decodeURIComponent(chat[1]!);
      if (!w.peers.has(peer)) return send(res, 404, { detail: `Peer ${peer} not found` });
      if (typeof b["query"] !== "string") return send(res, 422, { detail: "query required" });
      if (chatDelayMs) await new Promise((r) => setTimeout(r, chatDelayMs));
      const told = knowledge.get(`${wsId}\u0000${peer}`) ?? knowledge.get(`\u0000${peer}`);
      const said = [...w.sessions.values()]
        .flatMap((session) => session.messages)
        .filter((msg) => msg.peer_id === peer)
        .map((msg) => msg.content);
      const learned = options.learns && said.length ? `They said: ${said.join("; ")}` : undefined;
      return send(res, 200, { content: told ?? learned ?? null });
    }
    return send(res, 404, { detail: "Not Found" });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => send(res, 500, { detail: String(err) }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    peers: (ws) => workspaces.get(ws)?.peers ?? new Map(),
    sessions: (ws) => workspaces.get(ws)?.sessions ?? new Map(),
    messages: (ws, session) => workspaces.get(ws)?.sessions.get(session)?.messages ?? [],
    know: (peer, text, ws = "") => knowledge.set(`${ws}\u0000${peer}`, text),
    down: (status = 503) => {
      outage = status;
    },
    up: () => {
      outage = undefined;
    },
    slow: (ms) => {
      chatDelayMs = ms;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
