/**
 * One WhatsApp connection over time: builds a socket per attempt, reconnects after transient closes with
 * capped exponential backoff and jitter, and stops for good on closes that reconnecting cannot fix (the
 * device was logged out, another client took over the session). At most one attempt is ever in flight:
 * only the current socket's close schedules the next attempt, once, and events of an older socket are
 * ignored (Baileys destroys a closed socket's emitter; each attempt registers fresh handlers).
 */
import type { BaileysEventMap } from "@whiskeysockets/baileys";
import { PlatformError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { FileAuthState } from "./auth-state.js";
import type {
  BackoffOptions,
  ConnectionPhase,
  ConnectionState,
  FatalClose,
  SocketFactoryOptions,
  Timers,
  WhatsAppSocket,
  WhatsAppSocketFactory,
} from "./types.js";

export interface ConnectionOptions {
  auth: FileAuthState;
  factory: WhatsAppSocketFactory;
  logger: Logger;
  /** Baileys' logger (quieter than Herald's). */
  socketLogger: Logger;
  getMessage: SocketFactoryOptions["getMessage"];
  backoff?: BackoffOptions | undefined;
  random?: (() => number) | undefined;
  timers?: Timers | undefined;
  /** A QR code to show (the account is not linked yet). Must not throw. */
  onQr?: ((qr: string, socket: WhatsAppSocket) => void) | undefined;
  /** Registers the caller's handlers on each new socket (messages). Must not throw. */
  onSocket?: ((socket: WhatsAppSocket) => void) | undefined;
  /** The connection opened (after each (re)connect). Must not throw. */
  onOpen?: ((socket: WhatsAppSocket) => void) | undefined;
  /** The connection ended for good. Must not throw. */
  onFatal?: ((fatal: FatalClose) => void) | undefined;
}

const RELINK =
  "Run `herald whatsapp link` (or restart the gateway with WHATSAPP_ENABLED=true) to scan a new QR code.";

/** Classifies a close by Baileys' status code (DisconnectReason). */
export function classifyClose(statusCode: number | undefined): FatalClose | undefined {
  switch (statusCode) {
    case 401:
      return {
        kind: "logged-out",
        message: `WhatsApp logged this device out (it was removed from Linked devices, or the link expired); the saved credentials were deleted. ${RELINK}`,
      };
    case 440:
      return {
        kind: "replaced",
        message:
          "Another client opened this WhatsApp link (is a second Herald running with the same HERALD_HOME?). Stop the other one, then restart the gateway.",
      };
    case 403:
      return {
        kind: "forbidden",
        message: "WhatsApp refused this account (403: it may be banned or restricted). Check the phone.",
      };
    case 411:
      return {
        kind: "bad-session",
        message: `WhatsApp rejected the saved session (411: multi-device mismatch). Run \`herald whatsapp unlink\`, then link again. ${RELINK}`,
      };
    default:
      return undefined;
  }
}

/** The status code of a close's error (Baileys closes with a Boom: `output.statusCode`), if any. */
export function closeStatusCode(error: unknown): number | undefined {
  const output = (error as { output?: { statusCode?: unknown } } | undefined)?.output;
  return typeof output?.statusCode === "number" ? output.statusCode : undefined;
}

const realTimers: Timers = {
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

export class WhatsAppConnection {
  private socket: WhatsAppSocket | undefined;
  private phase: ConnectionPhase = "idle";
  private detail: string | undefined;
  private attempt = 0;
  private sockets = 0;
  private openedAt: number | undefined;
  private reconnectTimer: unknown;
  private firstOutcome: { resolve: () => void; reject: (err: Error) => void } | undefined;
  private readonly timers: Timers;
  private readonly random: () => number;

  constructor(private readonly options: ConnectionOptions) {
    this.timers = options.timers ?? realTimers;
    this.random = options.random ?? Math.random;
  }

  /** The socket when the connection is open, else undefined. */
  get openSocket(): WhatsAppSocket | undefined {
    return this.phase === "open" ? this.socket : undefined;
  }

  get status(): { phase: ConnectionPhase; detail?: string | undefined } {
    return { phase: this.phase, detail: this.detail };
  }

  /**
   * Connects. Resolves once the first attempt opened, showed a QR code, or closed transiently (it keeps
   * retrying in the background). Rejects with a PlatformError when the first close is fatal.
   */
  start(): Promise<void> {
    if (this.phase !== "idle") return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.firstOutcome = { resolve, reject };
      this.connect();
    });
  }

  /** Closes the socket and cancels any pending reconnect. Safe to call twice. */
  stop(): void {
    if (this.phase === "stopped") return;
    this.phase = "stopped";
    this.cancelReconnect();
    const socket = this.socket;
    this.socket = undefined;
    this.settle();
    if (socket) void Promise.resolve(socket.end(undefined)).catch(() => undefined);
  }

  private connect(): void {
    if (this.phase === "stopped" || this.phase === "failed") return;
    this.phase = this.sockets++ === 0 ? "connecting" : "reconnecting";
    const { auth, factory, socketLogger, getMessage } = this.options;
    let socket: WhatsAppSocket;
    try {
      socket = factory({ auth: auth.state, logger: socketLogger, getMessage });
    } catch (err) {
      this.options.logger.error({ err: (err as Error).message }, "whatsapp socket could not be created");
      this.scheduleReconnect(undefined);
      return;
    }
    this.socket = socket;
    socket.ev.on("creds.update", (update: BaileysEventMap["creds.update"]) => {
      auth
        .saveCreds(update)
        .catch((err: unknown) =>
          this.options.logger.error({ err: (err as Error).message }, "whatsapp credentials not saved"),
        );
    });
    socket.ev.on("connection.update", (update: Partial<ConnectionState>) => this.onUpdate(socket, update));
    this.options.onSocket?.(socket);
  }

  private onUpdate(socket: WhatsAppSocket, update: Partial<ConnectionState>): void {
    if (socket !== this.socket) return; // an older socket's late event
    if (update.qr) {
      this.phase = "waiting-for-link";
      this.detail = "waiting for the QR code to be scanned";
      this.options.onQr?.(update.qr, socket);
      this.settle();
    }
    if (update.connection === "open") {
      this.phase = "open";
      this.detail = undefined;
      this.openedAt = Date.now();
      this.options.logger.info({ user: socket.user?.id?.replace(/:\d+@/, "@") }, "whatsapp connected");
      this.settle();
      this.options.onOpen?.(socket);
    } else if (update.connection === "close") {
      this.onClose(socket, update.lastDisconnect?.error);
    }
  }

  private onClose(socket: WhatsAppSocket, error: unknown): void {
    if (socket !== this.socket) return;
    this.socket = undefined;
    if (this.phase === "stopped") return;
    const statusCode = closeStatusCode(error);
    const fatal = classifyClose(statusCode);
    if (fatal) {
      this.phase = "failed";
      this.detail = fatal.message;
      this.cancelReconnect();
      this.options.logger.error(
        { statusCode, reason: fatal.kind, fix: fatal.message },
        "whatsapp connection ended",
      );
      if (fatal.kind === "logged-out") {
        // The credentials are dead: delete them so the next start shows a QR code instead of failing again.
        this.options.auth
          .clear()
          .catch((err: unknown) =>
            this.options.logger.error({ err: (err as Error).message }, "whatsapp credentials not deleted"),
          );
      }
      this.options.onFatal?.(fatal);
      this.settle(new PlatformError("whatsapp", fatal.message, { code: "platform_auth_failed" }));
      return;
    }
    if (this.openedAt && Date.now() - this.openedAt >= (this.options.backoff?.stableMs ?? 30_000)) {
      this.attempt = 0;
    }
    this.openedAt = undefined;
    this.scheduleReconnect(statusCode);
    this.settle();
  }

  /** Schedules the next attempt; a no-op while one is already scheduled (no storms). */
  private scheduleReconnect(statusCode: number | undefined): void {
    if (this.reconnectTimer !== undefined || this.phase === "stopped" || this.phase === "failed") return;
    // 515 "restart required" follows a successful pairing: reconnect at once, it is not a fault.
    const delayMs = statusCode === 515 ? 0 : this.nextDelay();
    this.phase = "reconnecting";
    this.detail = `reconnecting in ${Math.round(delayMs / 100) / 10}s`;
    this.options.logger.warn(
      { statusCode, delayMs, attempt: this.attempt },
      "whatsapp connection closed, reconnecting",
    );
    this.reconnectTimer = this.timers.setTimeout(() => {
      this.reconnectTimer = undefined;
      this.connect();
    }, delayMs);
  }

  /** Capped exponential delay with "equal jitter": between half and all of the capped value. */
  private nextDelay(): number {
    const baseMs = this.options.backoff?.baseMs ?? 1000;
    const maxMs = this.options.backoff?.maxMs ?? 60_000;
    const capped = Math.min(maxMs, baseMs * 2 ** this.attempt);
    this.attempt++;
    return Math.round(capped / 2 + (capped / 2) * this.random());
  }

  private cancelReconnect(): void {
    if (this.reconnectTimer === undefined) return;
    this.timers.clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
  }

  /** Resolves (or rejects) `start()` once. */
  private settle(error?: Error): void {
    const outcome = this.firstOutcome;
    if (!outcome) return;
    this.firstOutcome = undefined;
    if (error) outcome.reject(error);
    else outcome.resolve();
  }
}
