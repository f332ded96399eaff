/**
 * Types of the WhatsApp adapter. Baileys types stay inside this folder: the gateway sees only
 * `InboundMessage`s and `PlatformAdapter`.
 */
import type {
  AuthenticationState,
  ConnectionState,
  proto,
  WAMessage,
  WAMessageKey,
  WASocket,
} from "@whiskeysockets/baileys";
import type { Logger } from "../../core/logger.js";

/** What the adapter needs from Herald's config (`whatsapp` section and `media.maxBytes`). */
export interface WhatsAppAdapterConfig {
  /** Answer in the account owner's "message yourself" chat. @defaultValue false */
  selfChat: boolean;
  /** Inbound media larger than this is left out (the agent gets a note instead). */
  maxMediaBytes: number;
  /** Where credentials and Signal keys live: `HERALD_HOME/whatsapp`. */
  authDir: string;
}

/**
 * The part of a Baileys socket the adapter uses. A real `makeWASocket` result satisfies it; tests pass a
 * fake whose `ev` is Baileys' own `makeEventBuffer`.
 */
export type WhatsAppSocket = Pick<
  WASocket,
  "ev" | "sendMessage" | "sendPresenceUpdate" | "readMessages" | "requestPairingCode" | "logout" | "end"
> & {
  readonly user: WASocket["user"];
  updateMediaMessage?: WASocket["updateMediaMessage"];
  /** LID → phone number lookups (Baileys 7); optional so fakes may leave it out. */
  signalRepository?: { lidMapping?: { getPNForLID(lid: string): Promise<string | null> } };
};

/** What a socket factory receives for each connection attempt. */
export interface SocketFactoryOptions {
  /** Credentials and Signal keys; Baileys mutates `creds` and writes keys through `keys.set`. */
  auth: AuthenticationState;
  /** A pino logger for Baileys (already limited to warnings unless Herald logs at debug). */
  logger: Logger;
  /** Content of a message this account sent, for Baileys' retry receipts. */
  getMessage: (key: WAMessageKey) => Promise<proto.IMessage | undefined>;
}

/**
 * Builds one socket. Called once per connection attempt: Baileys destroys a socket's event emitter on
 * close, so every reconnect gets a new socket and the adapter registers its handlers again.
 */
export type WhatsAppSocketFactory = (options: SocketFactoryOptions) => WhatsAppSocket;

/** Reconnect timing. Delays are `min(maxMs, baseMs * 2^attempt)`, then jittered down by up to half. */
export interface BackoffOptions {
  /** @defaultValue 1000 */
  baseMs?: number;
  /** @defaultValue 60_000 */
  maxMs?: number;
  /** A connection open at least this long resets the attempt count. @defaultValue 30_000 */
  stableMs?: number;
}

/** Timer functions, injectable so tests can see and fire the scheduled reconnect. */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Options that are not configuration: the seams tests and the CLI use. */
export interface WhatsAppAdapterOptions {
  /** @defaultValue the real `makeWASocket` */
  socketFactory?: WhatsAppSocketFactory;
  /** Shows a QR code to scan. @defaultValue prints it to stderr with qrcode-terminal */
  onQr?: (qr: string) => void;
  backoff?: BackoffOptions;
  /** Jitter source in [0, 1). @defaultValue Math.random */
  random?: () => number;
  timers?: Timers;
  /** How long `send` waits for a connection that is coming up before failing (retryably). @defaultValue 5000 */
  sendWaitMs?: number;
  /** Minimum time between two "composing" updates in one chat. @defaultValue 2000 */
  typingIntervalMs?: number;
}

/** Why a close ends the connection for good, or `undefined` when it is worth reconnecting. */
export type FatalClose = { kind: "logged-out" | "replaced" | "forbidden" | "bad-session"; message: string };

/** The connection's state as `status()` reports it. */
export type ConnectionPhase =
  | "idle"
  | "connecting"
  | "waiting-for-link"
  | "open"
  | "reconnecting"
  | "stopped"
  | "failed";

export type { ConnectionState, WAMessage, WAMessageKey };
