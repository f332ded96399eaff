/**
 * Mattermost's event WebSocket (`/api/v4/websocket`), on the `ws` package. `@mattermost/client`'s
 * `WebSocketClient` is written for browsers (it reads the global `WebSocket` and `CloseEvent`, which
 * Node 20 lacks, and logs to the console), so the protocol is spoken here; it is small: after the
 * socket opens the client sends `authentication_challenge` with the token, the server answers
 * `{status: "OK", seq_reply}` and sends `hello`; events follow as `{event, data, seq}`. A dropped
 * connection reconnects with backoff (doubling from `reconnectBaseMs` to 30 s). The token travels in the
 * challenge, never in the URL, so no log line carries it.
 */
import WebSocket from "ws";
import { describeError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import { frameSchema, type MattermostFrame } from "./types.js";

const MAX_BACKOFF_MS = 30_000;

/** What the socket reports. `onEvent` may throw: the error is logged and the socket carries on. */
export interface MattermostSocketOptions {
  /** `ws(s)://host/api/v4/websocket`. */
  url: string;
  token: string;
  logger: Logger;
  reconnectBaseMs?: number | undefined;
  /** A ping this often; no pong by the next one drops the connection (half-open sockets). @defaultValue 30000 */
  pingIntervalMs?: number | undefined;
  onEvent(frame: MattermostFrame): Promise<void>;
  /** After each `hello`, before any later event is handled (catching up on a gap). May throw (logged). */
  onConnected?(): Promise<void>;
  onState(state: "running" | "reconnecting"): void;
}

/** One kept-open event connection. `start` resolves at the first `hello`; rejects if that fails. */
export class MattermostSocket {
  private ws: WebSocket | undefined;
  private stopped = false;
  private attempt = 0;
  private timer: NodeJS.Timeout | undefined;
  private seq = 1;
  /** Events handled one after another, in the order the server sent them. */
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly options: MattermostSocketOptions) {}

  start(): Promise<void> {
    return new Promise((resolve, reject) => this.connect({ resolve, reject }));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    const ws = this.ws;
    this.ws = undefined;
    if (ws && ws.readyState !== WebSocket.CLOSED) {
      await new Promise<void>((resolve) => {
        ws.once("close", () => resolve());
        ws.close(1000);
        setTimeout(() => {
          ws.terminate();
          resolve();
        }, 2000).unref();
      });
    }
    await this.queue;
  }

  /** Sends an action (e.g. `user_typing`); dropped while disconnected. */
  send(action: string, data: Record<string, unknown>): void {
    if (this.ws?.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify({ seq: ++this.seq, action, data }));
    }
  }

  private connect(first?: { resolve: () => void; reject: (err: Error) => void }): void {
    if (this.stopped) return;
    const ws = new WebSocket(this.options.url, { handshakeTimeout: 15_000 });
    this.ws = ws;
    let authenticated = false;
    let awaitingPong = false;
    const pinger = setInterval(() => {
      if (awaitingPong) {
        this.options.logger.warn({}, "mattermost websocket answered no ping; reconnecting");
        ws.terminate();
        return;
      }
      if (ws.readyState !== WebSocket.OPEN) return;
      awaitingPong = true;
      ws.ping();
    }, this.options.pingIntervalMs ?? 30_000);
    pinger.unref();
    ws.on("pong", () => {
      awaitingPong = false;
    });
    ws.on("open", () => {
      this.seq = 1;
      ws.send(
        JSON.stringify({ seq: 1, action: "authentication_challenge", data: { token: this.options.token } }),
      );
    });
    ws.on("message", (raw) => {
      let frame: MattermostFrame;
      try {
        frame = frameSchema.parse(JSON.parse(String(raw)));
      } catch (err) {
        this.options.logger.warn(
          { error: describeError(err) },
          "mattermost websocket frame malformed; skipped",
        );
        return;
      }
      if (frame.seq_reply === 1 && frame.status && frame.status !== "OK") {
        ws.close(4001);
        first?.reject(
          new Error(
            "Mattermost refused MATTERMOST_TOKEN on the WebSocket. Fix: create a new access token for the bot account.",
          ),
        );
        // `first` stays set: the close that follows must not schedule a reconnect for a failed start.
        if (!first) this.options.logger.warn({}, "mattermost refused the token on the websocket");
        return;
      }
      if (frame.event === "hello") {
        authenticated = true;
        this.attempt = 0;
        this.options.onState("running");
        this.options.logger.info({}, "mattermost websocket connected");
        first?.resolve();
        first = undefined;
        const connected = this.options.onConnected;
        if (connected) {
          this.queue = this.queue.then(() =>
            connected().catch((err: unknown) => {
              this.options.logger.warn({ error: describeError(err) }, "mattermost catch-up failed");
            }),
          );
        }
        return;
      }
      if (!frame.event) return;
      this.queue = this.queue.then(() =>
        this.options.onEvent(frame).catch((err: unknown) => {
          this.options.logger.warn(
            { event: frame.event, error: describeError(err) },
            "mattermost event failed",
          );
        }),
      );
    });
    ws.on("error", (err) => {
      this.options.logger.debug({ error: describeError(err) }, "mattermost websocket error");
    });
    ws.on("close", (code) => {
      clearInterval(pinger);
      if (this.ws === ws) this.ws = undefined;
      if (this.stopped) return;
      if (first) {
        first.reject(
          new Error(
            `Mattermost's WebSocket at ${this.options.url} closed before it said hello (code ${code}). Fix: check MATTERMOST_URL and that a proxy in front of Mattermost passes WebSocket upgrades.`,
          ),
        );
        return;
      }
      this.options.onState("reconnecting");
      const delay = Math.min(MAX_BACKOFF_MS, (this.options.reconnectBaseMs ?? 1000) * 2 ** this.attempt++);
      this.options.logger.warn(
        { code, delayMs: delay, wasRunning: authenticated },
        "mattermost websocket closed; reconnecting",
      );
      this.timer = setTimeout(() => this.connect(), delay);
    });
  }
}
