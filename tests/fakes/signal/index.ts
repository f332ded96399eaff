/**
 * A fake signal-cli HTTP daemon on 127.0.0.1 speaking its JSON-RPC (`POST /api/v1/rpc`: `send`,
 * `sendTyping`, `sendReaction`, `listGroups`, `getAttachment`) and its event stream (`GET /api/v1/events`,
 * SSE with ids; `Last-Event-ID` resumes after an id, an unknown id replays everything kept, as
 * signal-cli does). Records what the bot sent per chat; faults can be queued per method.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export const BOT_NUMBER = "+4915100000001";
export const BOT_UUID = "00000000-0000-4000-8000-00000000b07a";

/** A message the bot sent, as the fake keeps it. `chat` is the recipient number or `group.<id>`. */
export interface SentMessage {
  timestamp: number;
  chat: string;
  text: string;
  quote?: { timestamp: number; author: string } | undefined;
  attachments: string[];
  /** The `textStyle` ranges sent with it (`start:length:STYLE`). */
  styles: string[];
}

/** A fault answered instead of the next call of a method. */
export type SignalFault =
  | { error: { code: number; message: string } }
  | { status: number }
  | { results: string };

export interface FakeSignal {
  url: string;
  readonly sent: SentMessage[];
  /** Every JSON-RPC call received: method and params. */
  readonly calls: { method: string; params: Record<string, unknown> }[];
  /** Groups `listGroups` returns (`id` is the base64 group id). */
  groups: { id: string; name: string; members: string[] }[];
  /** Attachments `getAttachment` serves, by id. */
  attachments: Map<string, Buffer>;
  /** Queues a received message as a `receive` event; returns its envelope timestamp. */
  receive(message: ReceiveInput): number;
  /** Answers the next call of `method` with the fault. */
  fault(method: string, fault: SignalFault): void;
  /** Messages the bot sent into a chat (a number, or `group.<id>`). */
  sentTo(chat: string): SentMessage[];
  /** Drops the open event streams (the client must reconnect). */
  dropStreams(): void;
  /** How many event-stream connections were made, with the Last-Event-ID each sent. */
  readonly streams: (string | undefined)[];
  close(): Promise<void>;
}

export interface ReceiveInput {
  from: string;
  fromUuid?: string;
  name?: string;
  text: string;
  groupId?: string;
  mentions?: { number?: string; uuid?: string; name?: string; start: number; length: number }[];
  attachments?: { id: string; contentType: string; filename?: string; size: number }[];
  quote?: { id: number; author: string };
  timestamp?: number;
}

let clock = 1_700_000_000_000;

export async function startFakeSignal(): Promise<FakeSignal> {
  const events: { id: string; data: string }[] = [];
  const clients = new Set<ServerResponse>();
  const faults = new Map<string, SignalFault[]>();
  const streams: (string | undefined)[] = [];
  const sent: SentMessage[] = [];
  const calls: FakeSignal["calls"] = [];
  let nextEvent = 1;

  const fake: FakeSignal = {
    url: "",
    sent,
    calls,
    streams,
    groups: [],
    attachments: new Map(),
    receive(m) {
      const timestamp = m.timestamp ?? ++clock;
      const envelope = {
        source: m.from,
        sourceNumber: m.from,
        sourceUuid: m.fromUuid ?? `uuid-${m.from}`,
        sourceName: m.name ?? "Someone",
        sourceDevice: 1,
        timestamp,
        dataMessage: {
          timestamp,
          message: m.text,
          expiresInSeconds: 0,
          viewOnce: false,
          mentions: m.mentions ?? [],
          attachments: m.attachments ?? [],
          ...(m.groupId
            ? { groupInfo: { groupId: m.groupId, groupName: "Group", revision: 1, type: "DELIVER" } }
            : {}),
          ...(m.quote
            ? { quote: { id: m.quote.id, author: m.quote.author, authorNumber: m.quote.author, text: "" } }
            : {}),
        },
      };
      const event = { id: String(nextEvent++), data: JSON.stringify({ envelope, account: BOT_NUMBER }) };
      events.push(event);
      for (const res of clients) write(res, event);
      return timestamp;
    },
    fault(method, fault) {
      faults.set(method, [...(faults.get(method) ?? []), fault]);
    },
    sentTo: (chat) => sent.filter((m) => m.chat === chat),
    dropStreams() {
      for (const res of clients) res.destroy();
      clients.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of clients) res.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };

  function write(res: ServerResponse, event: { id: string; data: string }): void {
    res.write(`id:${event.id}\nevent:receive\ndata:${event.data}\n\n`);
  }

  async function body(req: IncomingMessage): Promise<string> {
    const parts: Buffer[] = [];
    for await (const p of req) parts.push(p as Buffer);
    return Buffer.concat(parts).toString("utf8");
  }

  function json(res: ServerResponse, status: number, value: unknown): void {
    const data = JSON.stringify(value);
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(data) });
    res.end(data);
  }

  function rpc(method: string, params: Record<string, unknown>): { result?: unknown; error?: unknown } {
    const target = params["groupId"]
      ? `group.${params["groupId"]}`
      : ((params["recipient"] as string[] | undefined)?.[0] ?? "");
    const knownTarget = !params["groupId"] || fake.groups.some((g) => g.id === params["groupId"]);
    switch (method) {
      case "listGroups":
        return { result: fake.groups.map((g) => ({ ...g, isMember: true, isBlocked: false })) };
      case "sendTyping":
      case "sendReaction":
        if (!knownTarget) return { error: { code: -1, message: "Invalid group id" } };
        return { result: {} };
      case "getAttachment": {
        const data = fake.attachments.get(String(params["id"]));
        if (!data) return { error: { code: -1, message: "Attachment file not found" } };
        return { result: { data: data.toString("base64") } };
      }
      case "send": {
        if (!knownTarget) return { error: { code: -1, message: "Invalid group id" } };
        if (!target.startsWith("group.") && !/^\+\d+$/.test(target))
          return { error: { code: -1, message: `Unregistered user "${target}"` } };
        const timestamp = ++clock;
        const quoteTimestamp = params["quoteTimestamp"] as number | undefined;
        const attachments = params["attachments"];
        sent.push({
          timestamp,
          chat: target,
          text: String(params["message"] ?? ""),
          quote: quoteTimestamp
            ? { timestamp: quoteTimestamp, author: String(params["quoteAuthor"]) }
            : undefined,
          attachments: Array.isArray(attachments)
            ? attachments.map(String)
            : attachments
              ? [String(attachments)]
              : [],
          styles: ((params["textStyle"] as string[] | undefined) ?? []).map(String),
        });
        return {
          result: { timestamp, results: [{ recipientAddress: { number: target }, type: "SUCCESS" }] },
        };
      }
      default:
        return { error: { code: -32601, message: "Method not implemented" } };
    }
  }

  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method === "GET" && path === "/api/v1/check") return void res.writeHead(200).end();
    if (req.method === "GET" && path === "/api/v1/events") {
      const last = req.headers["last-event-id"] as string | undefined;
      streams.push(last);
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      res.write(":\n");
      const at = last ? events.findIndex((e) => e.id === last) : -1;
      const backlog = last && at === -1 ? events : events.slice(at + 1);
      for (const event of last ? backlog : []) write(res, event);
      clients.add(res);
      req.on("close", () => clients.delete(res));
      return;
    }
    if (req.method === "POST" && path === "/api/v1/rpc") {
      void body(req).then((text) => {
        const request = JSON.parse(text) as { id: string; method: string; params?: Record<string, unknown> };
        const params = request.params ?? {};
        calls.push({ method: request.method, params });
        const fault = faults.get(request.method)?.shift();
        if (fault && "status" in fault) return json(res, fault.status, {});
        if (fault && "error" in fault)
          return json(res, 200, { jsonrpc: "2.0", id: request.id, error: fault.error });
        if (fault && "results" in fault)
          return json(res, 200, {
            jsonrpc: "2.0",
            id: request.id,
            result: { timestamp: ++clock, results: [{ type: fault.results }] },
          });
        json(res, 200, { jsonrpc: "2.0", id: request.id, ...rpc(request.method, params) });
      });
      return;
    }
    json(res, 404, { error: "not found" });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}
