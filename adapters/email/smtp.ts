/**
 * The sending side: a nodemailer SMTP transport for the configured server, and the mapping of its
 * failures onto `PlatformError` (4xx and connection faults retryable, 5xx and refused logins not).
 */
import nodemailer from "nodemailer";
import type Mail from "nodemailer/lib/mailer/index.js";
import { PlatformError } from "../../core/errors.js";
import type { EmailAdapterConfig } from "./types.js";

/** What the adapter needs of a mail transport. */
export interface MailTransport {
  /** Sends one message; resolves once the server accepted it. */
  send(mail: Mail.Options): Promise<void>;
  /** Checks the connection and the login. */
  verify(): Promise<void>;
  close(): void;
}

/** A transport for `config`'s SMTP server. TLS: implicit on 465, STARTTLS required elsewhere; none when `tls` is false. */
export function createSmtpTransport(config: EmailAdapterConfig): MailTransport {
  const implicitTls = config.tls && config.smtpPort === 465;
  const timeoutMs = config.connectTimeoutMs ?? 30_000;
  const transporter = nodemailer.createTransport({
    host: config.smtpHost,
    port: config.smtpPort,
    secure: implicitTls,
    requireTLS: config.tls && !implicitTls,
    ignoreTLS: !config.tls,
    auth: { user: config.address, pass: config.password },
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs * 2,
  });
  return {
    async send(mail) {
      try {
        await transporter.sendMail(mail);
      } catch (err) {
        throw smtpError(config, err);
      }
    },
    async verify() {
      try {
        await transporter.verify();
      } catch (err) {
        throw smtpError(config, err);
      }
    },
    close() {
      transporter.close();
    },
  };
}

/** Maps a nodemailer failure to a PlatformError that says what to do. */
export function smtpError(config: EmailAdapterConfig, err: unknown): PlatformError {
  const e = err as { code?: string; responseCode?: number; response?: string; message?: string };
  const server = `${config.smtpHost}:${config.smtpPort}`;
  const reply = (e.response ?? e.message ?? String(err)).slice(0, 200);
  // ESTREAM: building the message failed reading a local attachment (missing, unreadable): no retry helps.
  if (e.code === "ESTREAM" || e.code === "ENOENT" || e.code === "EACCES" || e.code === "EISDIR") {
    return new PlatformError("email", `An attachment could not be read (${e.message ?? e.code}).`, {
      cause: err,
    });
  }
  if (e.code === "EAUTH" || e.responseCode === 535) {
    return new PlatformError(
      "email",
      `The SMTP server ${server} refused the login for EMAIL_ADDRESS ${config.address}: check EMAIL_PASSWORD (many providers need an app password for SMTP).`,
      { code: "platform_auth_failed", cause: err },
    );
  }
  if (e.responseCode !== undefined && e.responseCode >= 500) {
    return new PlatformError("email", `The SMTP server ${server} refused the message: ${reply}`, {
      cause: err,
    });
  }
  if (e.responseCode !== undefined && e.responseCode >= 400) {
    return new PlatformError("email", `The SMTP server ${server} deferred the message: ${reply}`, {
      cause: err,
      retryable: true,
    });
  }
  return new PlatformError(
    "email",
    `Could not send through ${server} (${reply}): check EMAIL_SMTP_HOST, EMAIL_SMTP_PORT and EMAIL_TLS.`,
    { cause: err, retryable: true },
  );
}
