/**
 * Types of the email adapter: its config, the header facts it keeps per message, and what the IMAP side
 * hands to the adapter. No imapflow or nodemailer type leaves this folder.
 */

/** Everything the email adapter needs; `emailConfigFrom(heraldConfig)` builds it from the gateway config. */
export interface EmailAdapterConfig {
  /** The assistant's own address: IMAP/SMTP login, `From:` of every reply, never answered. */
  address: string;
  password: string;
  imapHost: string;
  imapPort: number;
  smtpHost: string;
  smtpPort: number;
  /**
   * true: TLS required (implicit TLS on ports 993/465, STARTTLS on any other port).
   * false: no TLS at all (local servers and tests).
   */
  tls: boolean;
  /**
   * Sender addresses whose mail reaches the gateway (lowercased on comparison). Mail from anyone else is
   * dropped here, before the gateway, so a stranger (or a forged `From:`) never gets a pairing code or
   * any other answer: default deny.
   */
  allowedUsers: string[];
  /** Let every sender through to the gateway (GATEWAY_ALLOW_ALL_USERS). @defaultValue false */
  allowAllUsers?: boolean | undefined;
  /**
   * Pass a mail on only when the receiving server vouches for its `From:` address in its
   * `Authentication-Results` header (DMARC, or aligned DKIM or SPF; see sender-auth.ts). false believes
   * the `From:` address as written: anyone can then write an allowed user's address and get that user's
   * rights. @defaultValue true
   */
  verifySender?: boolean | undefined;
  /**
   * The authserv-id the receiving server writes first in its `Authentication-Results` header (e.g.
   * `mx.google.com`): only the topmost header with this name counts. Unset: the topmost header counts,
   * whoever wrote it.
   */
  trustedAuthservId?: string | undefined;
  /** How often the mailbox is searched for new mail besides IDLE (servers without IDLE rely on it). */
  pollIntervalMs: number;
  /** Attachments larger than this are not saved; the agent is told they were left out. */
  maxAttachmentBytes: number;
  /** Where inbound attachments are written (a subfolder `email/` is created). */
  cacheDir: string;
  /** Mailbox watched for new mail. @defaultValue "INBOX" */
  mailbox?: string | undefined;
  /** Display name on replies. @defaultValue "Herald" */
  fromName?: string | undefined;
  /** Subject of a new thread (a scheduled report) when the message names none. @defaultValue "Herald report" */
  defaultSubject?: string | undefined;
  /** Pause after the last IMAP command before IDLE starts. @defaultValue 1000 */
  idleDelayMs?: number | undefined;
  /** First reconnect delay after the IMAP connection drops; doubles up to `reconnectMaxMs`. @defaultValue 1000 */
  reconnectBaseMs?: number | undefined;
  /** @defaultValue 60000 */
  reconnectMaxMs?: number | undefined;
  /** Give up on one IMAP/SMTP connection attempt after this long. @defaultValue 30000 */
  connectTimeoutMs?: number | undefined;
}

/**
 * Header facts of the message a reply answers, as strings (they travel through the gateway as
 * `InboundMessage.meta` and come back as `OutboundMessage.inboundMeta`). Message ids keep their angle
 * brackets here because they go straight back into headers.
 */
export interface ThreadMeta {
  /** `Message-ID` of the message being answered, e.g. `<abc@example.com>`. */
  messageId: string;
  /** Its `References`, space-separated. */
  references: string;
  subject: string;
}

/** One message fetched from the mailbox, not yet parsed. */
export interface FetchedMail {
  uid: number;
  uidValidity: string;
  source: Buffer;
}

/**
 * What the adapter did with a fetched message. `recorded`: the gateway has it (mark it seen).
 * `skipped`: deliberately not passed on (automated mail, stranger, malformed); it stays unseen.
 * Throwing means "try again later": the message is neither marked nor counted as processed.
 */
export type MailOutcome = "recorded" | "skipped";

/** Handles one fetched message; see `MailOutcome`. */
export type MailHandler = (mail: FetchedMail) => Promise<MailOutcome>;
