/**
 * A fake WhatsApp at the socket boundary. WhatsApp's protocol (Noise handshake against WhatsApp's
 * certificate, binary nodes, Signal sessions) cannot be served locally, so the adapter's socket factory
 * gets `FakeWhatsAppSocket`s instead of `makeWASocket`: their `ev` is Baileys' own `makeEventBuffer`, and
 * they behave like a real socket where the adapter can tell (connection updates, QR codes, the 515
 * restart after pairing, a destroyed emitter after close, own messages echoed as `append`). Every
 * `sendMessage`, `sendPresenceUpdate`, `readMessages`, `requestPairingCode` and `logout` is recorded.
 */
import {
  type AnyMessageContent,
  type AuthenticationCreds,
  type ConnectionState,
  type MiscMessageGenerationOptions,
  makeEventBuffer,
  type proto,
  type WAMessage,
  type WAMessageKey,
  type WAPresence,
} from "@whiskeysockets/baileys";
import { pino } from "pino";
import { openFileAuthState } from "../../../adapters/whatsapp/auth-state.js";
import type {
  SocketFactoryOptions,
  WhatsAppSocket,
  WhatsAppSocketFactory,
} from "../../../adapters/whatsapp/types.js";

export { fixture, withId, withText } from "./messages.js";

/** What a new socket does once created. `auto`: open when the credentials are linked, else show a QR. */
export type ConnectStep = "auto" | "open" | "qr" | "hang" | { close: number };

export interface SentRecord {
  jid: string;
  content: AnyMessageContent;
  options: MiscMessageGenerationOptions | undefined;
  id: string;
  socket: number;
}

/** The linked account: "me" as Baileys stores it in `creds.me` (with device suffixes). */
export const OWNER = {
  id: "15550001111:12@s.whatsapp.net",
  lid: "210000000000001:12@lid",
  name: "Herald Owner",
};

/** An error shaped like Baileys' Boom (`output.statusCode`), as carried by `lastDisconnect.error`. */
export function boom(message: string, statusCode: number): Error {
  return Object.assign(new Error(message), {
    isBoom: true,
    output: { statusCode, payload: { statusCode, error: "", message } },
  });
}

const silent = pino({ level: "silent" });

export class FakeWhatsAppSocket implements WhatsAppSocket {
  readonly ev = makeEventBuffer(silent);
  readonly sent: SentRecord[] = [];
  readonly presence: { type: WAPresence; jid: string | undefined }[] = [];
  readonly reads: WAMessageKey[] = [];
  readonly pairingRequests: string[] = [];
  loggedOut = false;
  ended = false;
  private counter = 0;

  constructor(
    private readonly fake: FakeWhatsApp,
    readonly options: SocketFactoryOptions,
    readonly index: number,
  ) {}

  get user() {
    const me = this.options.auth.creds.me;
    return me ? { ...me } : undefined;
  }

  /** Runs the connect step on the next tick (handlers are registered after the factory returns). */
  boot(step: ConnectStep): void {
    setTimeout(() => {
      if (this.ended) return;
      this.update({ connection: "connecting", receivedPendingNotifications: false, qr: undefined });
      const linked = Boolean(this.options.auth.creds.me?.id);
      const resolved = step === "auto" ? (linked ? "open" : "qr") : step;
      if (resolved === "open") this.update({ connection: "open" });
      else if (resolved === "qr")
        this.update({ qr: `2@fakeQrRef${this.index},fakeNoiseKey,fakeIdentityKey,fakeAdv` });
      else if (typeof resolved === "object") void this.end(boom("Connection Failure", resolved.close));
    }, 0);
  }

  /** Delivers messages as WhatsApp would: `notify` for new ones, `append` for history and own echoes. */
  deliver(messages: WAMessage | WAMessage[], type: "notify" | "append" = "notify"): void {
    this.ev.emit("messages.upsert", { messages: Array.isArray(messages) ? messages : [messages], type });
  }

  /**
   * The phone scanned the QR code (or entered the pairing code): WhatsApp sends the account identity,
   * Baileys stores it and writes keys, then the server closes with 515 "restart required".
   */
  async scan(): Promise<void> {
    await this.options.auth.keys.set({
      "pre-key": {
        "1": { public: Buffer.from("pre-key-1-public"), private: Buffer.from("pre-key-1-private") },
      },
    });
    const update: Partial<AuthenticationCreds> = { me: { ...OWNER }, registered: true, platform: "android" };
    Object.assign(this.options.auth.creds, update); // Baileys' own creds.update handler does this first
    this.ev.emit("creds.update", update);
    await this.end(boom("Stream Errored (restart required)", 515));
  }

  /** The server dropped the connection. */
  drop(statusCode = 428): Promise<void> {
    return this.end(boom("Connection Closed", statusCode));
  }

  async sendMessage(
    jid: string,
    content: AnyMessageContent,
    options?: MiscMessageGenerationOptions,
  ): Promise<WAMessage | undefined> {
    if (this.ended) throw boom("Connection Closed", 428);
    const failure = this.fake.failSends;
    if (failure && failure.count > 0) {
      failure.count--;
      throw boom(failure.message ?? "rate-overlimit", failure.statusCode);
    }
    const id = options?.messageId ?? `3EB0FAKE${String(++this.counter).padStart(14, "0")}`;
    this.sent.push({ jid, content, options, id, socket: this.index });
    this.fake.notify();
    const message: WAMessage = {
      key: { remoteJid: jid, fromMe: true, id },
      message: messageOf(content),
      messageTimestamp: Math.floor(Date.now() / 1000),
      status: 2,
    };
    // Baileys echoes own sends as `append` (emitOwnEvents).
    setTimeout(() => {
      if (!this.ended) this.deliver(message, "append");
    }, 0);
    return message;
  }

  async sendPresenceUpdate(type: WAPresence, toJid?: string): Promise<void> {
    if (this.ended) throw boom("Connection Closed", 428);
    this.presence.push({ type, jid: toJid });
    this.fake.notify();
  }

  async readMessages(keys: WAMessageKey[]): Promise<void> {
    if (this.ended) throw boom("Connection Closed", 428);
    this.reads.push(...keys);
    this.fake.notify();
  }

  async requestPairingCode(phoneNumber: string): Promise<string> {
    this.pairingRequests.push(phoneNumber);
    this.fake.notify();
    return "K7XR2M9P";
  }

  async logout(msg?: string): Promise<void> {
    if (this.options.auth.creds.me?.id) this.loggedOut = true;
    this.fake.notify();
    void this.end(boom(msg ?? "Intentional Logout", 401));
  }

  /** Like Baileys: emits the close, then destroys the emitter (handlers never fire again). */
  async end(error: Error | undefined): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    this.update({ connection: "close", lastDisconnect: { error, date: new Date() } });
    this.ev.removeAllListeners("connection.update");
    this.ev.destroy();
    this.fake.notify();
  }

  private update(update: Partial<ConnectionState>): void {
    this.ev.emit("connection.update", update);
  }
}

/** Builds a socket's `WAMessage.message` from what was sent (for the echo and getMessage). */
function messageOf(content: AnyMessageContent): proto.IMessage {
  if ("text" in content) return { extendedTextMessage: { text: content.text } };
  if ("image" in content) return { imageMessage: { caption: (content as { caption?: string }).caption } };
  if ("document" in content)
    return { documentMessage: { fileName: (content as { fileName?: string }).fileName } };
  return {};
}

export class FakeWhatsApp {
  readonly sockets: FakeWhatsAppSocket[] = [];
  /** Connect steps for the next sockets, consumed in order; `auto` afterwards. */
  readonly script: ConnectStep[] = [];
  /** Makes the next `count` sends fail with a Boom of this status. */
  failSends: { count: number; statusCode: number; message?: string } | undefined;
  private waiters: (() => void)[] = [];

  /** Pass as `socketFactory`. */
  readonly factory: WhatsAppSocketFactory = (options) => {
    const socket = new FakeWhatsAppSocket(this, options, this.sockets.length);
    this.sockets.push(socket);
    socket.boot(this.script.shift() ?? "auto");
    this.notify();
    return socket;
  };

  /** The newest socket. */
  get current(): FakeWhatsAppSocket {
    const socket = this.sockets.at(-1);
    if (!socket) throw new Error("no socket was created yet");
    return socket;
  }

  /** Every message sent, on every socket, in order. */
  sent(): SentRecord[] {
    return this.sockets.flatMap((s) => s.sent);
  }

  /** The texts sent (chunks of replies), in order. */
  texts(): string[] {
    return this.sent().flatMap((s) => ("text" in s.content ? [s.content.text] : []));
  }

  notify(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Resolves once `check()` is truthy; rejects after `timeoutMs` with `what` in the message. */
  async waitFor<T>(check: () => T | undefined | false, what: string, timeoutMs = 10_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = check();
      if (value) return value;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 50));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  waitForSockets(count: number): Promise<FakeWhatsAppSocket> {
    return this.waitFor(() => this.sockets.length >= count && this.sockets[count - 1], `${count} sockets`);
  }

  waitForTexts(count: number, timeoutMs?: number): Promise<string[]> {
    return this.waitFor(() => this.texts().length >= count && this.texts(), `${count} sent texts`, timeoutMs);
  }
}

/** Writes credentials of a linked account into `authDir`, as a completed pairing leaves them. */
export async function seedLinkedCreds(authDir: string): Promise<void> {
  const auth = await openFileAuthState(authDir);
  await auth.saveCreds({ me: { ...OWNER }, registered: true, platform: "android" });
  await auth.flush();
}
