/**
 * The test SMTP endpoint: the `smtp-server` package in-process on 127.0.0.1 (free port, no STARTTLS,
 * plaintext AUTH). It records every message the adapter sends (raw and parsed back with mailparser),
 * optionally hands it on to a local mailbox (Dovecot over LMTP), and can refuse the next messages with a
 * chosen SMTP reply code.
 */
import type { AddressInfo } from "node:net";
import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

export interface CapturedMail {
  envelope: { from: string; to: string[] };
  /** The user name the client authenticated as, if any. */
  user: string | undefined;
  raw: Buffer;
  parsed: ParsedMail;
}

export interface SmtpSinkOptions {
  /** Accepted logins: user → password. Other logins get 535. Clients may also send without AUTH. */
  logins?: Record<string, string>;
  /** Called for each accepted message (e.g. deliver it into Dovecot). Errors fail the SMTP transaction. */
  forward?: (mail: CapturedMail) => Promise<void>;
}

export interface SmtpSink {
  readonly port: number;
  /** Every accepted message, in order. */
  readonly messages: CapturedMail[];
  /** Resolves once at least `count` messages were accepted; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<CapturedMail[]>;
  /** Refuses the next `times` messages at DATA with `code` (e.g. 451 temporary, 550 permanent). */
  failNext(code: number, times?: number): void;
  /** Refuses the next `times` AUTH attempts with 535, whatever the password (a revoked app password). */
  refuseNextLogin(times?: number): void;
  close(): Promise<void>;
}

/** Starts the sink. Close it with `close()`. */
export async function startSmtpSink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const messages: CapturedMail[] = [];
  const waiters = new Set<() => void>();
  const failures: number[] = [];
  let refusedLogins = 0;

  const server = new SMTPServer({
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    // Connections still open at close() are cut after this long instead of the default 30 s.
    closeTimeout: 1000,
    onAuth(auth, _session, callback) {
      if (refusedLogins > 0) {
        refusedLogins -= 1;
        callback(Object.assign(new Error("Invalid username or password"), { responseCode: 535 }));
        return;
      }
      const expected = options.logins?.[auth.username ?? ""];
      if (expected !== undefined && expected === auth.password) {
        callback(null, { user: auth.username });
        return;
      }
      const err = Object.assign(new Error("Invalid username or password"), { responseCode: 535 });
      callback(err);
    },
    onData(stream, session, callback) {
      const parts: Buffer[] = [];
      stream.on("data", (part: Buffer) => parts.push(part));
      stream.on("end", () => {
        const code = failures.shift();
        if (code !== undefined) {
          callback(Object.assign(new Error(`Refused by test (${code})`), { responseCode: code }));
          return;
        }
        const raw = Buffer.concat(parts);
        const envelope = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
        };
        const user = typeof session.user === "string" ? session.user : undefined;
        simpleParser(raw)
          .then(async (parsed) => {
            const mail = { envelope, user, raw, parsed };
            await options.forward?.(mail);
            messages.push(mail);
            for (const wake of waiters) wake();
            callback();
          })
          .catch((err: Error) => callback(Object.assign(err, { responseCode: 451 })));
      });
    },
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;

  return {
    port,
    messages,
    waitFor(count, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (messages.length < count) return;
          cleanup();
          resolve(messages.slice());
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`smtp sink: expected ${count} messages, got ${messages.length}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    failNext(code, times = 1) {
      for (let i = 0; i < times; i++) failures.push(code);
    },
    refuseNextLogin(times = 1) {
      refusedLogins += times;
    },
    close() {
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
