/**
 * The real socket factory (`makeWASocket`) and the small helpers both the adapter and the CLI use.
 */
import { createHash } from "node:crypto";
import {
  type GroupMetadata,
  makeCacheableSignalKeyStore,
  makeWASocket,
  type UserFacingSocketConfig,
} from "@whiskeysockets/baileys";
import qrcode from "qrcode-terminal";
import { describeError, PlatformError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import { closeStatusCode } from "./connection.js";
import type { WhatsAppSocket, WhatsAppSocketFactory } from "./types.js";

/** How long fetched group metadata (participants, addressing mode) is reused for sends. */
const GROUP_METADATA_TTL_MS = 5 * 60_000;

/**
 * Builds real Baileys sockets. The account stays "unavailable" after connecting (the owner's phone keeps
 * its notifications); history sync is limited to what WhatsApp pushes by default. `overrides` are extra
 * socket options (e.g. `waWebSocketUrl` for a proxy).
 */
export function createBaileysSocketFactory(
  overrides: Partial<UserFacingSocketConfig> = {},
): WhatsAppSocketFactory {
  return ({ auth, logger, getMessage }) => {
    const groups = new Map<string, { metadata: GroupMetadata; fetchedAt: number }>();
    const socket = makeWASocket({
      auth: { creds: auth.creds, keys: makeCacheableSignalKeyStore(auth.keys, logger) },
      logger,
      markOnlineOnConnect: false,
      syncFullHistory: false,
      getMessage,
      // Without a cache Baileys fetches a group's metadata before every send (rate limits in busy groups).
      cachedGroupMetadata: async (jid) => {
        const hit = groups.get(jid);
        if (hit && Date.now() - hit.fetchedAt < GROUP_METADATA_TTL_MS) return hit.metadata;
        const metadata = await socket.groupMetadata(jid);
        groups.set(jid, { metadata, fetchedAt: Date.now() });
        return metadata;
      },
      ...overrides,
    });
    socket.ev.on("groups.update", (updates) => {
      for (const u of updates) if (u.id) groups.delete(u.id);
    });
    socket.ev.on("group-participants.update", ({ id }) => groups.delete(id));
    return socket satisfies WhatsAppSocket;
  };
}

/** The registry's factory: real sockets to WhatsApp. */
export const createBaileysSocket: WhatsAppSocketFactory = createBaileysSocketFactory();

/** A pino child for Baileys: it is chatty, so it logs warnings and worse unless Herald is at trace. */
export function baileysLogger(logger: Logger): Logger {
  const level = logger.levelVal <= 10 ? "debug" : logger.levelVal > 40 ? logger.level : "warn";
  return logger.child({ component: "baileys" }, { level });
}

/**
 * The JID to send to: a JID as is; a phone number (`+15551234567`, `15551234567`) as its user JID, so
 * cron targets like `whatsapp:+15551234567` work.
 */
export function toJid(chatId: string): string {
  const id = chatId.trim();
  if (id.includes("@")) return id;
  const digits = id.replace(/^\+/, "").replace(/[\s().-]/g, "");
  if (/^\d{5,20}$/.test(digits)) return `${digits}@s.whatsapp.net`;
  throw new PlatformError("whatsapp", `Cannot send to '${chatId}': not a WhatsApp JID or phone number.`);
}

/**
 * The WhatsApp message id of chunk `index` of an outbox item: stable across retries, so a send that
 * reached WhatsApp but was not confirmed is re-sent with the same id and shown once. Same shape as
 * Baileys' own ids (`3EB0` + 18 hex digits).
 */
export function messageIdFor(idempotencyKey: string, index: number): string {
  const hash = createHash("sha256").update(`${idempotencyKey}\u0000${index}`).digest("hex");
  return `3EB0${hash.slice(0, 18).toUpperCase()}`;
}

/** A bounded map that forgets its oldest entries (recent messages for quoting and retries). */
export class RecentMap<K, V> {
  private readonly map = new Map<K, V>();
  constructor(private readonly max: number) {}
  get(key: K): V | undefined {
    return this.map.get(key);
  }
  has(key: K): boolean {
    return this.map.has(key);
  }
  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    while (this.map.size > this.max) this.map.delete(this.map.keys().next().value as K);
  }
}

/** Prints a QR code to the terminal (stderr, so JSON logs on stdout stay parseable). */
export function printQr(qr: string): void {
  qrcode.generate(qr, { small: true }, (art) => {
    process.stderr.write(
      `\nScan this QR code with WhatsApp (Settings → Linked devices → Link a device):\n${art}\n`,
    );
  });
}

/** Maps a failed `sendMessage` to a PlatformError the outbox understands. */
export function sendError(err: unknown, jid: string): PlatformError {
  const status = closeStatusCode(err);
  if (status === 400 || status === 404 || status === 406) {
    return new PlatformError(
      "whatsapp",
      `WhatsApp refused the message to ${jid} (${status}): ${describeError(err)}`,
      {
        cause: err,
      },
    );
  }
  return new PlatformError("whatsapp", `WhatsApp send failed: ${describeError(err)}`, {
    cause: err,
    retryable: true,
    retryAfterMs: status === 429 ? 30_000 : undefined,
    code: status === 429 ? "platform_rate_limited" : "platform_error",
  });
}
