/**
 * A fake Mem0 platform API (as `mem0ai` 3.3's `MemoryClient` speaks it) on 127.0.0.1: `GET /v1/ping/`,
 * `POST /v3/memories/add/` (each user message of an exchange becomes one memory with the request's
 * entity ids and metadata; the answer is the queued event), `POST /v3/memories/search/` and
 * `POST /v3/memories/` (list) filtered by `filters.user_id` (or `agent_id`, `run_id`), search ranked
 * by shared words. `Authorization: Token <key>` checked (401 otherwise); `down` answers 503 to
 * everything. Every request is recorded.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Mem0Request {
  method: string;
  path: string;
  authorization: string | undefined;
  body: unknown;
}

/** A memory as stored (the platform's snake_case fields). */
export interface Mem0Memory {
  id: string;
  memory: string;
  user_id: string | null;
  agent_id: string | null;
  run_id: string | null;
  app_id: string | null;
  metadata: Record<string, unknown> | null;
  categories: string[];
  created_at: string;
  updated_at: string;
}

export interface FakeMem0 {
  /** `http://127.0.0.1:<port>` */
  url: string;
  requests: Mem0Request[];
  memories: Mem0Memory[];
  /** Adds a memory of `userId` directly (what the platform inferred earlier), of `agentId` when given. */
  remember(userId: string, text: string, agentId?: string): void;
  down(status?: number): void;
  up(): void;
  close(): Promise<void>;
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

const words = (text: string) => new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);

/** The entity conditions of a filter: `{ user_id }`, or `{ AND: [{ user_id }, …] }`. */
function conditions(filters: unknown): Record<string, string> {
  if (!filters || typeof filters !== "object") return {};
  const f = filters as Record<string, unknown>;
  const out: Record<string, string> = {};
  for (const key of ["user_id", "agent_id", "run_id", "app_id"])
    if (typeof f[key] === "string") out[key] = f[key] as string;
  if (Array.isArray(f["AND"])) for (const part of f["AND"]) Object.assign(out, conditions(part));
  return out;
}

/** Starts the fake; requests need `Authorization: Token <apiKey>`. */
export async function startFakeMem0(options: { apiKey: string }): Promise<FakeMem0> {
  const requests: Mem0Request[] = [];
  const memories: Mem0Memory[] = [];
  let outage: number | undefined;
  const store = (text: string, ids: Partial<Mem0Memory>) => {
    const at = new Date().toISOString();
    const memory: Mem0Memory = {
      id: randomUUID(),
      memory: text,
      user_id: ids.user_id ?? null,
      agent_id: ids.agent_id ?? null,
      run_id: ids.run_id ?? null,
      app_id: ids.app_id ?? null,
      metadata: ids.metadata ?? null,
      categories: [],
      created_at: at,
      updated_at: at,
    };
    memories.push(memory);
    return memory;
  };
  const matching = (filters: unknown) => {
    const wanted = conditions(filters);
    if (Object.keys(wanted).length === 0) return undefined;
    return memories.filter((m) => Object.entries(wanted).every(([k, v]) => m[k as keyof Mem0Memory] === v));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://fake");
    const body = await readJson(req).catch(() => undefined);
    requests.push({
      method: req.method ?? "",
      path: url.pathname,
      authorization: req.headers.authorization,
      body,
    });
    if (outage) return send(res, outage, { detail: "Service unavailable" });
    if (req.headers.authorization !== `Token ${options.apiKey}`)
      return send(res, 401, { detail: "Invalid API key" });
    const b = (body ?? {}) as Record<string, unknown>;
    if (req.method === "GET" && url.pathname === "/v1/ping/")
      return send(res, 200, {
        status: "ok",
        message: "API key is valid",
        org_id: "org-1",
        project_id: "proj-1",
      });
    if (req.method === "POST" && url.pathname === "/v3/memories/add/") {
      const messages = Array.isArray(b["messages"]) ? (b["messages"] as Record<string, unknown>[]) : [];
      if (messages.length === 0) return send(res, 400, { detail: "messages required" });
      const ids = ["user_id", "agent_id", "run_id", "app_id"].filter((k) => typeof b[k] === "string");
      if (ids.length === 0)
        return send(res, 400, { detail: "one of user_id, agent_id, app_id, run_id is required" });
      for (const m of messages)
        if (m["role"] === "user" && typeof m["content"] === "string")
          store(m["content"], {
            user_id: b["user_id"] as string | undefined,
            agent_id: b["agent_id"] as string | undefined,
            run_id: b["run_id"] as string | undefined,
            app_id: b["app_id"] as string | undefined,
            metadata: (b["metadata"] ?? null) as Record<string, unknown> | null,
          });
      return send(res, 200, {
        message: "Memory processing has been queued for background execution",
        status: "PENDING",
        event_id: randomUUID(),
      });
    }
    if (req.method === "POST" && url.pathname === "/v3/memories/search/") {
      if (typeof b["query"] !== "string") return send(res, 400, { detail: "query required" });
      const found = matching(b["filters"]);
      if (!found) return send(res, 400, { detail: "filters with an entity id are required" });
      const q = words(b["query"]);
      const scored = found
        .map((m) => {
          const w = words(m.memory);
          const shared = [...q].filter((x) => w.has(x)).length;
          return { ...m, score: shared / Math.max(1, q.size) };
        })
        .sort((a, b2) => b2.score - a.score);
      const topK = typeof b["top_k"] === "number" ? b["top_k"] : 10;
      return send(res, 200, { results: scored.slice(0, topK) });
    }
    if (req.method === "POST" && url.pathname === "/v3/memories/") {
      const found = matching(b["filters"]);
      if (!found) return send(res, 400, { detail: "filters with an entity id are required" });
      return send(res, 200, { count: found.length, next: null, previous: null, results: found });
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
    memories,
    remember: (userId, text, agentId) => {
      store(text, { user_id: userId, ...(agentId ? { agent_id: agentId } : {}) });
    },
    down: (status = 503) => {
      outage = status;
    },
    up: () => {
      outage = undefined;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
