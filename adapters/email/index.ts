/**
 * The email adapter: receives on IMAP (imapflow: IDLE, polling fallback, reconnect), answers on SMTP
 * (nodemailer) in the same thread. One thread is one session: `chat = { platform: "email", chatId:
 * <sender address>, threadId: <bare Message-ID of the thread's first message> }`.
 *
 * A scheduled report goes to `email:<address>` (no thread): it starts a new thread with the job's
 * subject, and a reply to it continues that thread.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import type Mail from "nodemailer/lib/mailer/index.js";
import { ConfigError, PlatformError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type {
  AdapterDeps,
  AdapterStatus,
  ChatRef,
  InboundHandler,
  OutboundMessage,
  PlatformAdapter,
  SendOptions,
  SendResult,
} from "../../core/types.js";
import { DEFAULT_MEDIA_MAX_BYTES } from "../../core/types.js";
import { renderHtml, renderText } from "./format.js";
import { ImapInbox } from "./imap-inbox.js";
import { parseMail } from "./parse.js";
import { replySubject } from "./quote.js";
import type { EmailSection } from "./section.js";
import { summarizeSenderCheck } from "./sender-auth.js";
import { createSmtpTransport, type MailTransport } from "./smtp.js";
import { replyReferences, ThreadStore } from "./threads.js";
import type { EmailAdapterConfig, FetchedMail, MailOutcome, ThreadMeta } from "./types.js";

export type { EmailAdapterConfig } from "./types.js";

/** Email over IMAP + SMTP. Build it with `createEmailAdapter`. */
export class EmailAdapter implements PlatformAdapter {
  readonly platform = "email";
  private readonly config: EmailAdapterConfig;
  private readonly deps: AdapterDeps;
  private readonly log: Logger;
  private readonly threads: ThreadStore;
  private readonly ownAddress: string;
  private readonly allowed: Set<string>;
  private inbox: ImapInbox | undefined;
  private transport: MailTransport | undefined;

  constructor(config: EmailAdapterConfig, deps: AdapterDeps) {
    this.config = config;
    this.deps = deps;
    this.log = deps.logger.child({ platform: "email" });
    this.threads = new ThreadStore(deps.kv);
    this.ownAddress = config.address.trim().toLowerCase();
    this.allowed = new Set(config.allowedUsers.map((a) => a.trim().toLowerCase()));
  }

  /**
   * Checks the SMTP login, opens the mailbox and handles the mail already waiting.
   * @throws PlatformError naming the setting to fix (refused login, unreachable server).
   */
  async start(onMessage: InboundHandler): Promise<void> {
    if (this.inbox) return;
    if (this.allowed.size === 0 && !this.config.allowAllUsers) {
      this.log.warn(
        {},
        "EMAIL_ALLOWED_USERS is empty: only senders admitted by GATEWAY_ALLOWED_USERS (email:<address>), GATEWAY_ALLOW_ALL_USERS or a pairing approval are answered; set EMAIL_ALLOWED_USERS=you@example.com",
      );
    }
    warnAboutSenderCheck(this.config, this.log);
    const transport = this.transport ?? createSmtpTransport(this.config);
    this.transport = transport;
    try {
      await transport.verify();
    } catch (err) {
      // A refused login will not fix itself; an unreachable server may (the outbox retries sends).
      if (err instanceof PlatformError && err.code === "platform_auth_failed") throw err;
      this.log.warn({ err: (err as Error).message }, "smtp server not reachable at start");
    }
    const inbox = new ImapInbox({ config: this.config, kv: this.deps.kv, logger: this.log });
    await inbox.start((mail) => this.handleMail(mail, onMessage));
    this.inbox = inbox;
    this.log.info({ mailbox: this.config.mailbox ?? "INBOX" }, "email adapter receiving");
  }

  async stop(): Promise<void> {
    const inbox = this.inbox;
    this.inbox = undefined;
    await inbox?.stop();
    this.transport?.close();
    this.transport = undefined;
  }

  status(): AdapterStatus {
    return this.inbox?.status() ?? { state: "stopped" };
  }

  /**
   * Sends one mail (email has no practical length limit: never chunked). In a thread it answers the
   * inbound message (`inboundMeta`, or the thread's latest message) with `In-Reply-To`, `References` and
   * a `Re:` subject; without a thread it starts one with `message.subject`. The Message-ID derives from
   * `idempotencyKey`, so a retry after an unconfirmed send carries the same id (clients show it once).
   */
  async send(chat: ChatRef, message: OutboundMessage, options: SendOptions = {}): Promise<SendResult> {
    // The single chunk was confirmed by an earlier attempt.
    if ((options.fromChunk ?? 0) > 0) return { messageIds: [] };
    const to = chat.chatId.trim().toLowerCase();
    if (!/^[^@\s]+@[^@\s]+$/.test(to)) {
      throw new PlatformError("email", `Cannot send to '${chat.chatId}': not an email address.`);
    }
    if (to === this.ownAddress) {
      // Mail to ourselves would be dropped on arrival anyway; never start that loop.
      throw new PlatformError("email", `Not sending to ${to}: that is EMAIL_ADDRESS itself.`);
    }
    const meta = this.replyMeta(chat, message);
    const domain = this.ownAddress.split("@")[1] ?? "herald.invalid";
    const digest = createHash("sha256").update(message.idempotencyKey).digest("hex").slice(0, 32);
    const id = `herald.${digest}@${domain}`;
    const subject = meta
      ? replySubject(meta.subject)
      : message.subject?.trim() || this.config.defaultSubject || "Herald report";
    const mail: Mail.Options = {
      from: { name: this.config.fromName ?? "Herald", address: this.config.address },
      to,
      subject,
      messageId: `<${id}>`,
      text: renderText(message.text),
      html: renderHtml(message.text),
      headers: {
        // RFC 3834: marks us as an automatic responder, so other assistants and vacation
        // responders do not answer us (no loops).
        "Auto-Submitted": meta ? "auto-replied" : "auto-generated",
        "X-Auto-Response-Suppress": "All",
      },
      attachments: (message.files ?? []).map((file) => ({
        path: file.path,
        filename: file.fileName,
        contentType: file.mimeType,
      })),
    };
    if (meta) {
      mail.inReplyTo = meta.messageId;
      mail.references = replyReferences(meta);
    }
    if (!this.transport) this.transport = createSmtpTransport(this.config);
    await this.transport.send(mail);

    const root = chat.threadId ?? id;
    this.threads.remember(id, root, to, subject);
    if (!meta) this.threads.rememberOpening(id, subject, message.text);
    this.threads.setLastMeta(root, {
      messageId: `<${id}>`,
      references: meta ? replyReferences(meta) : "",
      subject,
    });
    options.onChunkSent?.(0, id);
    return { messageIds: [id] };
  }

  /** The message this send answers: the inbound meta, else the thread's latest message, else none. */
  private replyMeta(chat: ChatRef, message: OutboundMessage): ThreadMeta | undefined {
    const inbound = message.inboundMeta;
    if (inbound?.["messageId"]) {
      return {
        messageId: inbound["messageId"],
        references: inbound["references"] ?? "",
        subject: inbound["subject"] ?? "",
      };
    }
    return chat.threadId ? this.threads.lastMeta(chat.threadId) : undefined;
  }

  private isAllowed(address: string): boolean {
    return (
      this.config.allowAllUsers === true ||
      this.allowed.has(address) ||
      this.deps.isAllowed?.(address) === true
    );
  }

  /** One fetched mail → the gateway. Never throws except when the gateway could not record it. */
  private async handleMail(mail: FetchedMail, onMessage: InboundHandler): Promise<MailOutcome> {
    let result: Awaited<ReturnType<typeof parseMail>>;
    try {
      result = await parseMail(mail, {
        ownAddress: this.ownAddress,
        isAllowed: (address) => this.isAllowed(address),
        threads: this.threads,
        attachmentsDir: join(this.config.cacheDir, "email"),
        maxAttachmentBytes: this.config.maxAttachmentBytes,
        senderCheck:
          this.config.verifySender === false
            ? undefined
            : { trustedAuthservId: this.config.trustedAuthservId },
      });
    } catch (err) {
      this.log.warn({ uid: mail.uid, err: (err as Error).message }, "malformed mail skipped");
      return "skipped";
    }
    if (result.kind === "skip") {
      // Never the body: the sender, the reason and, for an unverified sender, which header said what.
      const { reason, from, detail } = result;
      this.log.info({ uid: mail.uid, reason, from, ...(detail ? { detail } : {}) }, "mail not answered");
      return "skipped";
    }
    if (result.vouchedBy) this.log.debug({ uid: mail.uid, ...result.vouchedBy }, "mail sender vouched for");
    await onMessage(result.message);
    return "recorded";
  }
}

/** A start-up warning when senders are not checked, or checked against any server's header. */
function warnAboutSenderCheck(config: EmailAdapterConfig, log: Logger): void {
  const summary = summarizeSenderCheck(config);
  if (summary.mode === "pinned") return;
  log.warn({ fix: summary.fix }, summary.text);
}

/** Builds the email adapter from its config section. */
export function createEmailAdapter(config: EmailAdapterConfig, deps: AdapterDeps): EmailAdapter {
  return new EmailAdapter(config, deps);
}

/**
 * The adapter config from the `email:` section and the media size cap. Senders are admitted by
 * EMAIL_ALLOWED_USERS or by the gateway's own access decision (`deps.isAllowed`: the global allowlist,
 * GATEWAY_ALLOW_ALL_USERS, pairing approvals).
 * @throws ConfigError when the section lacks the address, password or hosts.
 */
export function emailConfigFrom(
  section: EmailSection,
  deps: Pick<AdapterDeps, "cacheDir" | "mediaMaxBytes">,
): EmailAdapterConfig {
  if (!section.address || !section.password || !section.imapHost || !section.smtpHost) {
    throw new ConfigError(
      "EMAIL_ADDRESS",
      "Email needs EMAIL_ADDRESS, EMAIL_PASSWORD, EMAIL_IMAP_HOST and EMAIL_SMTP_HOST: set all four.",
    );
  }
  return {
    address: section.address,
    password: section.password,
    imapHost: section.imapHost,
    imapPort: section.imapPort,
    smtpHost: section.smtpHost,
    smtpPort: section.smtpPort,
    tls: section.tls,
    allowedUsers: section.allowedUsers,
    verifySender: section.verifySender,
    trustedAuthservId: section.trustedAuthservId,
    pollIntervalMs: section.pollIntervalMs,
    maxAttachmentBytes: deps.mediaMaxBytes ?? DEFAULT_MEDIA_MAX_BYTES,
    cacheDir: deps.cacheDir,
  };
}
