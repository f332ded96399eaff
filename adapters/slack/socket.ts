/**
 * Socket Mode transport: the SDK's SocketModeClient (`apps.connections.open`, then a WebSocket), with
 * reconnection owned here rather than by the SDK. When `apps.connections.open` fails with an HTTP or
 * network error during a reconnect, the SDK's own loop leaves the rejected promise unhandled (fatal in a
 * process that treats unhandled rejections as such) and never tries again; this loop backs off, keeps
 * trying, stops only on auth errors (a revoked app token does not come back), and reports status.
 */
import type { App, Receiver, Logger as SlackLogger } from "@slack/bolt";
import { SocketModeClient } from "@slack/socket-mode";
import { describeError, PlatformError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { AdapterStatus } from "../../core/types.js";
import { toPlatformError } from "./api.js";
import { dispatchEvent, type EventBody } from "./receiver.js";

export interface SocketReceiverOptions {
  appToken: string;
  apiUrl: string;
  ackDeadlineMs: number;
  /** First reconnect delay; doubles per failure up to `maxReconnectMs`. */
  reconnectBaseMs: number;
  /** @defaultValue 30000 */
  maxReconnectMs?: number;
  /** Longest wait for Slack's `hello` after connecting. @defaultValue 20000 */
  connectTimeoutMs?: number;
  logger: Logger;
  sdkLogger: SlackLogger;
  /** Told of every status change. Must not throw. */
  onStatus: (status: AdapterStatus) => void;
}

/** The arguments the Socket Mode client passes with `slack_event`. */
interface SocketEvent {
  ack: (response?: Record<string, unknown>) => Promise<void>;
  type: string;
  body: EventBody;
  retry_num?: number;
  retry_reason?: string;
}

/** The message of an app-token failure, naming the fix. */
function appTokenError(err: unknown): PlatformError {
  const mapped = toPlatformError("apps.connections.open", err);
  if (mapped.code !== "platform_auth_failed") return mapped;
  const code = (err as { data?: { error?: string } }).data?.error ?? "invalid_auth";
  return new PlatformError(
    "slack",
    `SLACK_APP_TOKEN was refused by apps.connections.open (${code}). Fix: in your Slack app enable Socket Mode, create an app-level token (xapp-…) with the connections:write scope under Basic Information → App-Level Tokens, and set SLACK_APP_TOKEN to it.`,
    { code: "platform_auth_failed", cause: err },
  );
}

/** Socket Mode receiver for bolt. `start` resolves once connected; later drops reconnect by themselves. */
export class SocketReceiver implements Receiver {
  private app: App | undefined;
  private readonly client: SocketModeClient;
  private stopping = true;
  private connecting = false;
  private failures = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: SocketReceiverOptions) {
    this.client = new SocketModeClient({
      appToken: options.appToken,
      logger: options.sdkLogger,
      autoReconnectEnabled: false,
      // The SDK's WebClient for apps.connections.open takes the Socket Mode client's logger.
      clientOptions: { slackApiUrl: options.apiUrl, retryConfig: { retries: 0 } },
    });
    this.client.on("slack_event", (event: SocketEvent) => void this.onEvent(event));
    this.client.on("disconnected", () => this.onDisconnected());
  }

  init(app: App): void {
    this.app = app;
  }

  /** Connects. Rejects with a PlatformError naming the fix (bad app token, Slack unreachable). */
  async start(): Promise<void> {
    this.stopping = false;
    try {
      await this.connectOnce();
    } catch (err) {
      this.stopping = true;
      throw appTokenError(err);
    }
    this.options.onStatus({ state: "running" });
  }

  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    // Resolves after the close handshake, so no socket outlives the adapter.
    await this.client.disconnect().catch(() => {});
  }

  private async connectOnce(): Promise<void> {
    this.connecting = true;
    let timer: NodeJS.Timeout | undefined;
    const timeoutMs = this.options.connectTimeoutMs ?? 20_000;
    try {
      await Promise.race([
        this.client.start(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            // Drop the half-open socket so a later attempt does not leave it behind.
            this.client.websocket?.disconnect();
            reject(new Error(`no hello from Slack within ${timeoutMs} ms`));
          }, timeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
      this.connecting = false;
    }
  }

  private onDisconnected(): void {
    if (this.stopping || this.connecting) return;
    this.options.logger.warn({}, "slack socket mode connection closed; reconnecting");
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopping || this.reconnectTimer) return;
    const max = this.options.maxReconnectMs ?? 30_000;
    const delayMs = Math.min(max, this.options.reconnectBaseMs * 2 ** Math.min(this.failures, 10));
    this.options.onStatus({ state: "reconnecting", detail: `next attempt in ${delayMs} ms` });
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.reconnect();
    }, delayMs);
  }

  private async reconnect(): Promise<void> {
    if (this.stopping) return;
    try {
      await this.connectOnce();
      this.failures = 0;
      this.options.logger.info({}, "slack socket mode reconnected");
      this.options.onStatus({ state: "running" });
    } catch (err) {
      if (this.stopping) return;
      const mapped = appTokenError(err);
      if (mapped.code === "platform_auth_failed") {
        // A revoked app token does not come back: stop trying and say how to fix it.
        this.options.logger.error({ error: mapped.message }, "slack socket mode cannot reconnect");
        this.options.onStatus({ state: "failed", detail: mapped.message });
        return;
      }
      this.failures += 1;
      this.options.logger.warn(
        { error: describeError(err), failures: this.failures },
        "slack socket mode reconnect failed",
      );
      this.scheduleReconnect();
    }
  }

  private async onEvent(event: SocketEvent): Promise<void> {
    const log = this.options.logger;
    try {
      if ((event.type !== "events_api" && event.type !== "interactive") || !this.app) {
        // Slash commands are not used; acknowledge so Slack does not resend them.
        await event.ack();
        return;
      }
      const ok = await dispatchEvent(
        this.app,
        { body: event.body, retryNum: event.retry_num, retryReason: event.retry_reason },
        this.options.ackDeadlineMs,
        log,
      );
      if (ok) await event.ack();
    } catch (err) {
      // The socket dropped before the ack: Slack delivers the event again and the ledger drops the copy.
      log.warn({ error: describeError(err) }, "slack socket mode ack failed");
    }
  }
}
