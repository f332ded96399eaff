/**
 * The Socket Mode side of the fake Slack: WebSocket connections handed out by `apps.connections.open`,
 * a `hello` on connect, `events_api` and `interactive` envelopes pushed by tests, and the client's acks
 * recorded.
 */
import type { Server } from "node:http";
import { type WebSocket, WebSocketServer } from "ws";
import type { FakeSlackEnvelope } from "./types.js";

export class FakeSocketMode {
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly sockets = new Set<WebSocket>();
  private current: WebSocket | undefined;
  private opened = 0;
  private envelopes = 0;
  private readonly ackWaiters = new Map<string, () => void>();
  private readonly acked = new Set<string>();
  private readonly connectionWaiters = new Set<() => void>();

  constructor(server: Server) {
    server.on("upgrade", (req, socket, head) => {
      if (!req.url?.startsWith("/link")) {
        socket.destroy();
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => this.onConnection(ws));
    });
  }

  connectionCount(): number {
    return this.opened;
  }

  waitForConnections(count: number, timeoutMs = 10_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (this.opened < count || !this.current) return;
        clearTimeout(timer);
        this.connectionWaiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.connectionWaiters.delete(check);
        reject(
          new Error(
            `fake slack: ${count} socket connection(s) not opened within ${timeoutMs} ms (have ${this.opened})`,
          ),
        );
      }, timeoutMs);
      this.connectionWaiters.add(check);
      check();
    });
  }

  push(
    body: object,
    options: { retryAttempt?: number; retryReason?: string; type?: "events_api" | "interactive" } = {},
  ): FakeSlackEnvelope {
    const ws = this.current;
    if (!ws) throw new Error("fake slack: no open Socket Mode connection");
    this.envelopes += 1;
    const envelopeId = `env-${this.envelopes}-${Math.random().toString(16).slice(2, 10)}`;
    const acked = new Promise<void>((resolve) => this.ackWaiters.set(envelopeId, resolve));
    ws.send(
      JSON.stringify({
        envelope_id: envelopeId,
        type: options.type ?? "events_api",
        accepts_response_payload: false,
        retry_attempt: options.retryAttempt ?? 0,
        retry_reason: options.retryReason ?? "",
        payload: body,
      }),
    );
    return { envelopeId, acked, isAcked: () => this.acked.has(envelopeId) };
  }

  requestReconnect(): void {
    this.current?.send(
      JSON.stringify({ type: "disconnect", reason: "refresh_requested", debug_info: { host: "fake" } }),
    );
  }

  dropConnection(): void {
    const ws = this.current;
    this.current = undefined;
    ws?.terminate();
  }

  async close(): Promise<void> {
    for (const ws of this.sockets) ws.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private onConnection(ws: WebSocket): void {
    this.opened += 1;
    this.sockets.add(ws);
    this.current = ws;
    ws.on("message", (data) => {
      let msg: { envelope_id?: string };
      try {
        msg = JSON.parse(String(data)) as { envelope_id?: string };
      } catch {
        return;
      }
      if (!msg.envelope_id) return;
      this.acked.add(msg.envelope_id);
      this.ackWaiters.get(msg.envelope_id)?.();
    });
    ws.on("close", () => {
      this.sockets.delete(ws);
      if (this.current === ws) this.current = undefined;
    });
    ws.send(
      JSON.stringify({
        type: "hello",
        num_connections: 1,
        debug_info: { host: "fake-slack", approximate_connection_time: 18060 },
        connection_info: { app_id: "A0FAKE001" },
      }),
    );
    for (const w of [...this.connectionWaiters]) w();
  }
}
