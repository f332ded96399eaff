/**
 * Linking and unlinking outside the gateway (`herald whatsapp link|unlink`). Linking connects with the
 * saved (or fresh) credentials and waits until WhatsApp accepts the device: by QR code, or by an
 * 8-character pairing code typed on the phone (`--phone`). Unlinking logs the device out on WhatsApp's
 * side, then deletes the credentials; without a connection it still deletes them and says so.
 */
import type { Logger } from "../../core/logger.js";
import { deleteAuthDir, type FileAuthState, hasLinkedCreds, openFileAuthState } from "./auth-state.js";
import { type ConnectionOptions, WhatsAppConnection } from "./connection.js";
import { baileysLogger, createBaileysSocket } from "./socket.js";
import type { BackoffOptions, Timers, WhatsAppSocket, WhatsAppSocketFactory } from "./types.js";

export interface LinkOptions {
  /** `HERALD_HOME/whatsapp`. */
  authDir: string;
  /** Phone number of the account (any format: `+1 555 123 4567`); set for a pairing code instead of a QR. */
  phone?: string | undefined;
  logger: Logger;
  /** Shows a QR code. Must not throw. */
  onQr: (qr: string) => void;
  /** Shows the pairing code to type on the phone. Must not throw. */
  onPairingCode: (code: string) => void;
  /** @defaultValue 300_000 (5 minutes) */
  timeoutMs?: number;
  socketFactory?: WhatsAppSocketFactory;
  backoff?: BackoffOptions;
  timers?: Timers;
}

export type LinkResult = { status: "linked" | "already-linked"; user: string };

/** Digits of a phone number in international format, or an error naming the expected format. */
export function normalisePhone(phone: string): string {
  const digits = phone
    .replace(/[\s().-]/g, "")
    .replace(/^\+/, "")
    .replace(/^00/, "");
  if (!/^\d{7,15}$/.test(digits)) {
    throw new Error(
      `'${phone}' is not a phone number in international format. Use the country code and number, e.g. --phone +15551234567.`,
    );
  }
  return digits;
}

/** Calls `onTimeout` after `ms` unless settled first; the returned `done(fn)` stops the clock and runs `fn`. */
function deadline(ms: number, onTimeout: () => void): (fn: () => void) => void {
  const timer = setTimeout(onTimeout, ms);
  timer.unref?.();
  return (fn) => {
    clearTimeout(timer);
    fn();
  };
}

/** A connection for linking or unlinking: it handles no messages, so `getMessage` finds none. */
function oneOffConnection(
  options: Pick<LinkOptions, "socketFactory" | "logger" | "backoff" | "timers">,
  auth: FileAuthState,
  handlers: Pick<ConnectionOptions, "onQr" | "onOpen" | "onFatal">,
): WhatsAppConnection {
  return new WhatsAppConnection({
    auth,
    factory: options.socketFactory ?? createBaileysSocket,
    logger: options.logger,
    socketLogger: baileysLogger(options.logger),
    getMessage: async () => undefined,
    backoff: options.backoff,
    timers: options.timers,
    ...handlers,
  });
}

const displayUser = (jid: string | undefined) => (jid ? `+${jid.split(/[:@]/)[0]}` : "unknown");

/**
 * Links Herald to a WhatsApp account and returns once WhatsApp confirmed it (credentials saved).
 * @throws Error when linking failed for good or did not finish within `timeoutMs`.
 */
export async function linkWhatsApp(options: LinkOptions): Promise<LinkResult> {
  const phone = options.phone === undefined ? undefined : normalisePhone(options.phone);
  const auth = await openFileAuthState(options.authDir);
  const me = auth.state.creds.me?.id;
  if (me) return { status: "already-linked", user: displayUser(me) };
  const requested = new WeakSet<WhatsAppSocket>();
  let connection: WhatsAppConnection | undefined;
  try {
    const user = await new Promise<string>((resolve, reject) => {
      const timeoutMs = options.timeoutMs ?? 300_000;
      const done = deadline(timeoutMs, () =>
        reject(
          new Error(
            `WhatsApp was not linked within ${Math.round(timeoutMs / 1000)} s. Run the command again.`,
          ),
        ),
      );
      connection = oneOffConnection(options, auth, {
        onQr: (qr, socket) => {
          if (!phone) return options.onQr(qr);
          // The socket is ready for pairing: ask once per socket for a code instead of showing the QR.
          if (requested.has(socket)) return;
          requested.add(socket);
          socket.requestPairingCode(phone).then(options.onPairingCode, (err: unknown) => {
            done(() =>
              reject(new Error(`WhatsApp refused to issue a pairing code: ${(err as Error).message}`)),
            );
          });
        },
        onOpen: (socket) => done(() => resolve(displayUser(socket.user?.id ?? auth.state.creds.me?.id))),
        onFatal: (fatal) => done(() => reject(new Error(fatal.message))),
      });
      connection.start().catch((err: unknown) => done(() => reject(err)));
    });
    await auth.flush();
    return { status: "linked", user };
  } finally {
    connection?.stop();
    await auth.flush();
  }
}

export interface UnlinkOptions {
  authDir: string;
  logger: Logger;
  /** How long to try to reach WhatsApp for the logout. @defaultValue 20_000 */
  timeoutMs?: number;
  socketFactory?: WhatsAppSocketFactory;
  backoff?: BackoffOptions;
  timers?: Timers;
}

export type UnlinkResult =
  | { status: "logged-out" }
  | { status: "not-linked" }
  /** WhatsApp could not be reached: credentials deleted, the phone may still list the device. */
  | { status: "deleted-offline"; reason: string };

/** Logs the linked device out (when reachable) and deletes the saved credentials. */
export async function unlinkWhatsApp(options: UnlinkOptions): Promise<UnlinkResult> {
  if (!hasLinkedCreds(options.authDir)) {
    await deleteAuthDir(options.authDir);
    return { status: "not-linked" };
  }
  const auth = await openFileAuthState(options.authDir);
  let connection: WhatsAppConnection | undefined;
  let result: UnlinkResult;
  try {
    await new Promise<void>((resolve, reject) => {
      const done = deadline(options.timeoutMs ?? 20_000, () =>
        reject(new Error("WhatsApp could not be reached")),
      );
      connection = oneOffConnection(options, auth, {
        onOpen: (socket) => {
          socket.logout().then(
            () => done(resolve),
            (err: unknown) => done(() => reject(err)),
          );
        },
        // 401 is the logout itself (or WhatsApp had already removed the device): both mean done.
        onFatal: (fatal) =>
          done(() => (fatal.kind === "logged-out" ? resolve() : reject(new Error(fatal.message)))),
        onQr: () => done(() => reject(new Error("the saved credentials are no longer accepted"))),
      });
      connection.start().catch(() => undefined);
    });
    result = { status: "logged-out" };
  } catch (err) {
    result = { status: "deleted-offline", reason: (err as Error).message };
  } finally {
    connection?.stop();
  }
  await auth.clear();
  return result;
}
