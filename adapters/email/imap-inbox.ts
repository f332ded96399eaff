/**
 * Watches one IMAP mailbox with imapflow: IDLE (imapflow starts it after a quiet pause), a polling timer
 * for servers without IDLE and for missed notifications, reconnects with backoff after a drop.
 *
 * Exactly-once bookkeeping: the last processed UID is kept per UIDVALIDITY in the key-value store and
 * advanced only after the handler returned, and `\Seen` is added only after the gateway recorded the
 * message. A crash in between redelivers the message with the same id, which the gateway's ledger
 * drops. When the UIDVALIDITY is unknown (first start) or changed (mailbox recreated), the unseen
 * messages are what is left to handle: they become a backlog worked off before newer mail.
 */
import { ImapFlow } from "imapflow";
import { PlatformError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { AdapterStatus, KeyValueStore } from "../../core/types.js";
import type { EmailAdapterConfig, MailHandler } from "./types.js";

const KEY_VALIDITY = "imap:uidvalidity";
const KEY_LAST_UID = "imap:last-uid";
const KEY_BACKLOG = "imap:backlog";

function readBacklog(raw: string | undefined): number[] {
  try {
    const value: unknown = JSON.parse(raw ?? "[]");
    return Array.isArray(value) ? value.filter((v): v is number => Number.isInteger(v)) : [];
  } catch {
    return [];
  }
}

export interface ImapInboxOptions {
  config: EmailAdapterConfig;
  kv: KeyValueStore;
  logger: Logger;
}

/** One mailbox watcher. `start`/`stop` are an idempotent pair. */
export class ImapInbox {
  private readonly config: EmailAdapterConfig;
  private readonly kv: KeyValueStore;
  private readonly log: Logger;
  private readonly mailbox: string;
  private client: ImapFlow | undefined;
  private handler: MailHandler | undefined;
  private state: AdapterStatus["state"] = "stopped";
  private detail: string | undefined;
  private stopping = false;
  private syncing: Promise<void> | undefined;
  private syncAgain = false;
  private pollTimer: NodeJS.Timeout | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private reconnectAttempt = 0;

  constructor(options: ImapInboxOptions) {
    this.config = options.config;
    this.kv = options.kv;
    this.log = options.logger;
    this.mailbox = options.config.mailbox ?? "INBOX";
  }

  /**
   * Connects, selects the mailbox and handles what is already waiting. Resolves when watching.
   * @throws PlatformError naming the setting to fix when the server refuses the login or cannot be reached.
   */
  async start(handler: MailHandler): Promise<void> {
    if (this.handler) return;
    this.handler = handler;
    this.stopping = false;
    this.state = "starting";
    try {
      await this.connect();
    } catch (err) {
      this.handler = undefined;
      this.state = "failed";
      throw startError(this.config, err);
    }
    this.pollTimer = setInterval(() => this.kick(), this.config.pollIntervalMs);
    this.pollTimer.unref();
  }

  /** Stops watching and logs out. A handler call still running finishes without marking its message. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.handler = undefined;
    clearInterval(this.pollTimer);
    clearTimeout(this.reconnectTimer);
    this.pollTimer = undefined;
    this.reconnectTimer = undefined;
    const client = this.client;
    this.client = undefined;
    if (client) await closeClient(client);
    this.state = "stopped";
  }

  status(): AdapterStatus {
    return this.detail ? { state: this.state, detail: this.detail } : { state: this.state };
  }

  private async connect(): Promise<void> {
    const { config } = this;
    const implicitTls = config.tls && config.imapPort === 993;
    const client = new ImapFlow({
      host: config.imapHost,
      port: config.imapPort,
      secure: implicitTls,
      doSTARTTLS: config.tls && !implicitTls,
      auth: { user: config.address, pass: config.password },
      logger: false,
      autoIdleDelay: config.idleDelayMs ?? 1000,
      maxIdleTime: config.pollIntervalMs,
      connectionTimeout: config.connectTimeoutMs ?? 30_000,
      greetingTimeout: config.connectTimeoutMs ?? 30_000,
      disableCompression: true,
    });
    // Emitted at most once per connection, right before 'close': the close handler reconnects.
    client.on("error", (err: Error) => this.log.warn({ err: err.message }, "imap connection error"));
    client.on("close", () => this.onClose(client));
    client.on("exists", () => this.kick());
    try {
      await client.connect();
      // Opened without a lock: imapflow idles only while no lock is held.
      await client.mailboxOpen(this.mailbox);
    } catch (err) {
      client.close();
      throw err;
    }
    if (this.stopping) {
      await closeClient(client);
      return;
    }
    this.client = client;
    this.state = "running";
    this.detail = undefined;
    this.reconnectAttempt = 0;
    this.kick();
  }

  private onClose(client: ImapFlow): void {
    if (this.client !== client || this.stopping) return;
    this.client = undefined;
    this.state = "reconnecting";
    this.detail = "IMAP connection closed";
    this.log.warn({ host: this.config.imapHost }, "imap connection closed, reconnecting");
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopping || this.reconnectTimer) return;
    const base = this.config.reconnectBaseMs ?? 1000;
    const max = this.config.reconnectMaxMs ?? 60_000;
    const delayMs = Math.min(max, base * 2 ** this.reconnectAttempt) * (0.75 + Math.random() * 0.25);
    this.reconnectAttempt++;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.connect().catch((err: unknown) => {
        this.detail = `reconnect failed: ${(err as Error).message}`;
        this.log.warn(
          { err: (err as Error).message, attempt: this.reconnectAttempt },
          "imap reconnect failed",
        );
        this.scheduleReconnect();
      });
    }, delayMs);
  }

  /** Asks for a pass over the mailbox; passes never overlap, a request during one runs another after it. */
  private kick(): void {
    this.syncAgain = true;
    if (this.syncing) return;
    this.syncing = (async () => {
      while (this.syncAgain && this.client && !this.stopping) {
        this.syncAgain = false;
        try {
          await this.syncOnce(this.client);
        } catch (err) {
          // The poll timer or the next reconnect tries again; nothing was marked or counted.
          if (!this.stopping) this.log.warn({ err: (err as Error).message }, "imap sync failed");
          break;
        }
      }
    })().finally(() => {
      this.syncing = undefined;
    });
  }

  private async syncOnce(client: ImapFlow): Promise<void> {
    const lock = await client.getMailboxLock(this.mailbox);
    try {
      const box = client.mailbox;
      if (!box) return;
      const validity = box.uidValidity.toString();
      if (this.kv.get(KEY_VALIDITY) !== validity) await this.baseline(client, validity, box.uidNext);
      // Unseen mail from before the baseline first, then everything newer than the last processed UID.
      const backlog = readBacklog(this.kv.get(KEY_BACKLOG));
      while (backlog.length > 0) {
        if (!(await this.handleOne(client, backlog[0]!, validity))) return;
        backlog.shift();
        this.kv.set(KEY_BACKLOG, JSON.stringify(backlog));
      }
      const lastUid = Number(this.kv.get(KEY_LAST_UID) ?? "0");
      const found = await client.search({ uid: `${lastUid + 1}:*` }, { uid: true });
      // `n:*` always matches the newest message, even when its UID is below n.
      const uids = (found || []).filter((uid) => uid > lastUid).sort((a, b) => a - b);
      for (const uid of uids) {
        if (!(await this.handleOne(client, uid, validity))) return;
        this.kv.set(KEY_LAST_UID, String(uid));
      }
    } finally {
      lock.release();
    }
  }

  /**
   * First start, or the mailbox was recreated (new UIDVALIDITY: every stored UID is meaningless): what
   * is still unseen below UIDNEXT becomes the backlog, everything from UIDNEXT on is new mail.
   */
  private async baseline(client: ImapFlow, validity: string, uidNext: number | undefined): Promise<void> {
    const unseen = ((await client.search({ seen: false }, { uid: true })) || []).sort((a, b) => a - b);
    const lastUid = uidNext ? uidNext - 1 : (unseen.at(-1) ?? 0);
    this.kv.set(KEY_BACKLOG, JSON.stringify(unseen.filter((uid) => uid <= lastUid)));
    this.kv.set(KEY_LAST_UID, String(lastUid));
    // Written last: a crash before this line repeats the baseline.
    this.kv.set(KEY_VALIDITY, validity);
    this.log.info({ validity, backlog: unseen.length }, "imap mailbox baseline");
  }

  /** Fetches and hands over one message. False when stopping (leave it for the next start). */
  private async handleOne(client: ImapFlow, uid: number, uidValidity: string): Promise<boolean> {
    const handler = this.handler;
    if (!handler || this.stopping) return false;
    const message = await client.fetchOne(String(uid), { uid: true, source: true }, { uid: true });
    if (message === false || !message.source) return true; // expunged meanwhile
    this.log.debug({ uid, uidValidity }, "imap message fetched");
    const outcome = await handler({ uid, uidValidity, source: message.source });
    if (this.stopping) return false;
    if (outcome === "recorded") await client.messageFlagsAdd(String(uid), ["\\Seen"], { uid: true });
    return true;
  }
}

async function closeClient(client: ImapFlow): Promise<void> {
  if (client.usable) {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, 2000);
    });
    await Promise.race([client.logout().catch(() => {}), timeout]);
    clearTimeout(timer);
  }
  client.close();
}

function startError(config: EmailAdapterConfig, err: unknown): PlatformError {
  const e = err as {
    authenticationFailed?: boolean;
    serverResponseCode?: string;
    code?: string;
    message?: string;
  };
  if (e.authenticationFailed && e.serverResponseCode === "UNAVAILABLE") {
    return new PlatformError(
      "email",
      `The IMAP server ${config.imapHost}:${config.imapPort} could not check the login right now (temporary authentication failure): try again later or ask the mail provider.`,
      { cause: err, retryable: true },
    );
  }
  if (e.authenticationFailed || e.code === "AUTHENTICATIONFAILED") {
    return new PlatformError(
      "email",
      `The IMAP server ${config.imapHost}:${config.imapPort} refused the login for EMAIL_ADDRESS ${config.address}: check EMAIL_PASSWORD (many providers need an app password for IMAP).`,
      { code: "platform_auth_failed", cause: err },
    );
  }
  return new PlatformError(
    "email",
    `Could not open the mailbox on ${config.imapHost}:${config.imapPort} (${e.message ?? String(err)}): check EMAIL_IMAP_HOST, EMAIL_IMAP_PORT and EMAIL_TLS.`,
    { cause: err, retryable: true },
  );
}
