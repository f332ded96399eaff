/**
 * The fake's gateway WebSocket: HELLO, IDENTIFY → READY + GUILD_CREATE, heartbeats and ACKs, DISPATCH
 * with sequence numbers, RECONNECT, RESUME with replay of the events the client missed, INVALID
 * SESSION, and the close codes for a bad token (4004) and a disallowed intent (4014). Plain JSON frames.
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";
import type { GatewayFrame, Json } from "./types.js";

const MESSAGE_CONTENT_INTENT = 1 << 15;

interface Session {
  id: string;
  seq: number;
  /** Every dispatch of this session, in order (replayed on RESUME). */
  events: { s: number; t: string; d: Json }[];
  socket: WebSocket | undefined;
  /** The client has IDENTIFYed or RESUMEd on the current socket. */
  live: boolean;
}

export interface FakeGatewayOptions {
  token: string;
  heartbeatIntervalMs: number;
  messageContentIntent: boolean;
  /** READY payload for a new session. */
  ready(sessionId: string): Json;
  /** GUILD_CREATE payloads sent after READY. */
  guilds(): Json[];
}

/** The gateway half of the fake. Tests reach it as `fake.gateway`. */
export class FakeGateway {
  /** Every frame in and out, in order. */
  readonly frames: GatewayFrame[] = [];
  /** Already-delivered events re-sent on the next RESUME (Discord may replay what the client had). */
  replayOnResume = 0;
  /** When false, heartbeats are not acknowledged (a zombie connection). */
  ackHeartbeats = true;
  private readonly wss = new WebSocketServer({ noServer: true });
  private session: Session | undefined;
  private connectionCount = 0;
  private readonly connectionOf = new WeakMap<WebSocket, number>();
  private readonly waiters = new Set<() => void>();

  constructor(private readonly options: FakeGatewayOptions) {
    this.wss.on("connection", (socket) => this.onConnection(socket));
  }

  /** Hands an HTTP upgrade on `/gateway` or `/resume` to the WebSocket server. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => this.wss.emit("connection", ws, req));
  }

  /** Connections opened so far. */
  get connections(): number {
    return this.connectionCount;
  }

  /** Frames the client sent with this opcode (2 IDENTIFY, 6 RESUME, 1 heartbeat). */
  received(op: number): GatewayFrame[] {
    return this.frames.filter((f) => f.dir === "in" && f.op === op);
  }

  /** True once a client has identified (events can be dispatched, live or kept for RESUME). */
  get hasSession(): boolean {
    return this.session !== undefined;
  }

  /** True while a client is identified or resumed on an open socket. */
  get live(): boolean {
    return this.session?.live === true;
  }

  /** Resolves once a client is live (after IDENTIFY/READY or RESUME/RESUMED). */
  async waitLive(): Promise<void> {
    while (!this.live) await new Promise<void>((resolve) => this.waiters.add(resolve));
  }

  /**
   * Sends a DISPATCH to the current session. While the client is disconnected the event is kept and
   * delivered by the replay on RESUME, as Discord does.
   */
  dispatch(t: string, d: Json): void {
    const session = this.session;
    if (!session) throw new Error("fake discord: no gateway session yet (start the client first)");
    const event = { s: ++session.seq, t, d };
    session.events.push(event);
    if (session.live && session.socket) this.send(session.socket, { op: 0, ...event });
  }

  /** Sends op 7 RECONNECT: the client should close and RESUME. */
  requestReconnect(): void {
    const socket = this.session?.socket;
    if (socket) this.send(socket, { op: 7, d: null });
  }

  /** Drops the TCP connection without a close frame (a network fault). */
  drop(): void {
    const session = this.session;
    if (!session?.socket) return;
    session.live = false;
    session.socket.terminate();
    session.socket = undefined;
  }

  /** Closes the live socket with a gateway close code (e.g. 4004 token reset, 4014 intent revoked). */
  closeWith(code: number, reason = "closed by the fake"): void {
    const session = this.session;
    if (!session?.socket) return;
    session.live = false;
    session.socket.close(code, reason);
    session.socket = undefined;
  }

  /** Closes every socket (fake shutdown). */
  async close(): Promise<void> {
    for (const client of this.wss.clients) client.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private onConnection(socket: WebSocket): void {
    const connection = ++this.connectionCount;
    this.connectionOf.set(socket, connection);
    socket.on("message", (raw) => {
      let frame: Json;
      try {
        frame = JSON.parse(String(raw));
      } catch {
        socket.close(4002, "Error while decoding payload.");
        return;
      }
      this.frames.push({ dir: "in", connection, op: frame["op"], d: frame["d"] });
      this.onFrame(socket, frame);
    });
    socket.on("close", () => {
      if (this.session?.socket === socket) {
        this.session.live = false;
        this.session.socket = undefined;
      }
    });
    this.send(socket, { op: 10, d: { heartbeat_interval: this.options.heartbeatIntervalMs } });
  }

  private onFrame(socket: WebSocket, frame: Json): void {
    const d = frame["d"];
    switch (frame["op"]) {
      case 1:
        if (this.ackHeartbeats) this.send(socket, { op: 11 });
        return;
      case 2:
        this.identify(socket, d);
        return;
      case 6:
        this.resume(socket, d);
        return;
      default:
        return;
    }
  }

  private identify(socket: WebSocket, d: Json): void {
    if (d?.["token"] !== this.options.token) {
      socket.close(4004, "Authentication failed.");
      return;
    }
    if ((Number(d["intents"]) & MESSAGE_CONTENT_INTENT) !== 0 && !this.options.messageContentIntent) {
      socket.close(4014, "Disallowed intent(s).");
      return;
    }
    this.session?.socket?.terminate();
    const session: Session = { id: randomBytes(16).toString("hex"), seq: 0, events: [], socket, live: true };
    this.session = session;
    this.dispatch("READY", this.options.ready(session.id));
    for (const guild of this.options.guilds()) this.dispatch("GUILD_CREATE", guild);
    this.wake();
  }

  private resume(socket: WebSocket, d: Json): void {
    if (d?.["token"] !== this.options.token) {
      socket.close(4004, "Authentication failed.");
      return;
    }
    const session = this.session;
    if (!session || session.id !== d["session_id"]) {
      this.send(socket, { op: 9, d: false });
      return;
    }
    session.socket = socket;
    session.live = true;
    const from = Math.max(0, Number(d["seq"] ?? 0) - this.replayOnResume);
    this.replayOnResume = 0;
    for (const event of session.events) {
      // Discord replays dispatches, never the session's READY.
      if (event.s > from && event.t !== "READY") this.send(socket, { op: 0, ...event });
    }
    const resumed = { s: ++session.seq, t: "RESUMED", d: { _trace: ["fake-gateway"] } };
    session.events.push(resumed);
    this.send(socket, { op: 0, ...resumed });
    this.wake();
  }

  private wake(): void {
    for (const resolve of this.waiters) resolve();
    this.waiters.clear();
  }

  private send(socket: WebSocket, frame: Json): void {
    const connection = this.connectionOf.get(socket) ?? 0;
    this.frames.push({
      dir: "out",
      connection,
      op: frame["op"],
      t: frame["t"],
      s: frame["s"],
      d: frame["d"],
    });
    socket.send(JSON.stringify(frame));
  }
}
