/**
 * Shared setup of the email end-to-end tests: a private Dovecot with a few bot mailboxes and two human
 * users, an SMTP endpoint that records what the adapter sends and delivers it into Dovecot, an in-memory
 * key-value store, and a recording stand-in for the gateway (ledger dedupe + a scripted reply).
 *
 * `mail()` plays the bot's receiving mail server, which checked the sender: it puts its
 * `Authentication-Results` (authserv-id `AUTHSERV_ID`, DMARC passed for the From domain) on top of the
 * mail before handing it to Dovecot, and every adapter config trusts that authserv-id. Tests of the
 * sender check itself write their own headers and deliver through `dovecot.deliver`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ImapFlow } from "imapflow";
import nodemailer from "nodemailer";
import type Mail from "nodemailer/lib/mailer/index.js";
import { afterAll, afterEach, beforeAll } from "vitest";
import {
  createEmailAdapter,
  type EmailAdapter,
  type EmailAdapterConfig,
} from "../../adapters/email/index.js";
import { createLogger, silentLogger } from "../../core/logger.js";
import type { AdapterDeps, InboundHandler, InboundMessage, KeyValueStore } from "../../core/types.js";
import { type SmtpSink, startSmtpSink } from "../fakes/email/smtp-sink.js";
import { type Dovecot, startDovecot } from "../helpers/dovecot.js";

export const DOMAIN = "herald.test";
export const PASSWORD = "bot-secret";
export const ALICE = "alice@example.test";
export const MALLORY = "mallory@example.test";
const BOTS = 12;
/** The authserv-id of the bots' receiving mail server (what EMAIL_TRUSTED_AUTHSERV_ID names). */
export const AUTHSERV_ID = "mx.herald.test";

export interface Bot {
  address: string;
  user: string;
}

export interface EmailEnv {
  dovecot: Dovecot;
  smtp: SmtpSink;
  cacheDir: string;
  /** A bot mailbox no other test of this file used. */
  nextBot(): Bot;
  /** Adapter config for `bot` against this env (fast IDLE, slow poll unless overridden). */
  config(bot: Bot, overrides?: Partial<EmailAdapterConfig>): EmailAdapterConfig;
  /** The EMAIL_* variables that configure a gateway's adapter for `bot` as an operator would. */
  gatewayEnv(bot: Bot): Record<string, string>;
  /**
   * Delivers a mail into `bot`'s INBOX as the recipient's MTA would after checking its sender: with
   * its `Authentication-Results` on top (see `vouched`). Returns the Message-ID as delivered.
   */
  mail(bot: Bot, options: Mail.Options | string): Promise<string>;
  close(): Promise<void>;
}

export async function startEmailEnv(options: { imapCapability?: string } = {}): Promise<EmailEnv> {
  const bots = Array.from({ length: BOTS }, (_, i) => ({ name: `bot${i + 1}`, password: PASSWORD }));
  const users = [...bots, { name: "alice", password: "alice" }, { name: "mallory", password: "mallory" }];
  const dovecot = await startDovecot({ users, ...options });
  const local = new Set(users.map((u) => u.name));
  const smtp = await startSmtpSink({
    logins: Object.fromEntries(bots.map((b) => [`${b.name}@${DOMAIN}`, PASSWORD])),
    async forward(mail) {
      for (const to of mail.envelope.to) {
        const user = to.split("@")[0] ?? "";
        if (local.has(user)) await dovecot.deliver(mail.raw, to);
      }
    },
  });
  const cacheDir = mkdtempSync(join(tmpdir(), "herald-email-cache-"));
  let used = 0;
  return {
    dovecot,
    smtp,
    cacheDir,
    nextBot() {
      used++;
      if (used > BOTS) throw new Error("email-env: out of bot mailboxes, raise BOTS");
      return { address: `bot${used}@${DOMAIN}`, user: `bot${used}` };
    },
    config(bot, overrides = {}) {
      return {
        address: bot.address,
        password: PASSWORD,
        imapHost: "127.0.0.1",
        imapPort: dovecot.imapPort,
        smtpHost: "127.0.0.1",
        smtpPort: smtp.port,
        tls: false,
        allowedUsers: [ALICE],
        trustedAuthservId: AUTHSERV_ID,
        pollIntervalMs: 60_000,
        maxAttachmentBytes: 1024 * 1024,
        cacheDir,
        idleDelayMs: 100,
        reconnectBaseMs: 100,
        reconnectMaxMs: 500,
        connectTimeoutMs: 5000,
        ...overrides,
      };
    },
    gatewayEnv(bot) {
      return {
        EMAIL_ADDRESS: bot.address,
        EMAIL_PASSWORD: PASSWORD,
        EMAIL_IMAP_HOST: "127.0.0.1",
        EMAIL_IMAP_PORT: String(dovecot.imapPort),
        EMAIL_SMTP_HOST: "127.0.0.1",
        EMAIL_SMTP_PORT: String(smtp.port),
        EMAIL_TLS: "false",
        EMAIL_ALLOWED_USERS: ALICE,
        EMAIL_TRUSTED_AUTHSERV_ID: AUTHSERV_ID,
      };
    },
    async mail(bot, message) {
      if (typeof message === "string") return dovecot.deliver(vouched(message), bot.address);
      const composed = await composer.sendMail(message);
      const raw = (composed.message as Buffer).toString();
      await dovecot.deliver(vouched(raw), bot.address, fromAddressOf(raw));
      return composed.messageId;
    },
    async close() {
      await smtp.close();
      await dovecot.stop();
      rmSync(cacheDir, { recursive: true, force: true });
    },
  };
}

/** Builds raw messages from nodemailer options (no transport: the buffer is the message). */
const composer = nodemailer.createTransport({ streamTransport: true, buffer: true });

/**
 * `raw` as the receiving server hands it on after it checked the sender: its `Authentication-Results`
 * on top, saying DMARC passed for the domain of the From address. A mail without a From address gets
 * no header (there is nothing to vouch for).
 */
export function vouched(raw: string | Buffer): string {
  const text = raw.toString();
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const domain = fromAddressOf(text)?.split("@")[1];
  if (!domain) return text;
  return `Authentication-Results: ${AUTHSERV_ID}; dkim=pass header.d=${domain}; dmarc=pass (p=none) header.from=${domain}${eol}${text}`;
}

/** The first address of a raw message's From header (also its envelope sender here). */
function fromAddressOf(raw: string): string | undefined {
  const head = raw.split(/\r?\n\r?\n/)[0]!.replace(/\r?\n[ \t]+/g, " ");
  return /^from:[^\n]*?([^\s<>",:]+@[A-Za-z0-9.-]+)/im.exec(head)?.[1];
}

/** An in-memory `KeyValueStore` (survives adapter restarts when the test keeps it). */
export function memoryKv(): KeyValueStore & { data: Map<string, string> } {
  const data = new Map<string, string>();
  return {
    data,
    get: (key) => data.get(key),
    set: (key, value) => void data.set(key, value),
    delete: (key) => void data.delete(key),
  };
}

export function adapterDeps(kv: KeyValueStore, cacheDir: string): AdapterDeps {
  const logger = process.env["HERALD_TEST_LOG"] ? createLogger({ level: "debug" }) : silentLogger();
  return { logger, homeDir: cacheDir, cacheDir, kv };
}

/**
 * A stand-in for the gateway: drops duplicates by `messageId` (its ledger may be shared across adapter
 * restarts), records what it accepted, and answers through `adapter.send` when `reply` returns text.
 */
export class FakeGateway {
  readonly accepted: InboundMessage[] = [];
  readonly duplicates: InboundMessage[] = [];
  private readonly waiters = new Set<() => void>();
  /** Return text to answer, or undefined to stay silent. */
  reply: ((m: InboundMessage) => string | undefined) | undefined = (m) => `echo: ${m.text}`;
  /** Make the next `onMessage` calls fail (the ledger could not record). */
  failNext = 0;
  /** When set, `onMessage` resolves only when this promise does (a slow ledger). */
  hold: Promise<void> | undefined;

  constructor(
    readonly ledger: Set<string> = new Set(),
    private adapter?: EmailAdapter,
  ) {}

  attach(adapter: EmailAdapter): this {
    this.adapter = adapter;
    return this;
  }

  readonly handler: InboundHandler = async (message) => {
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error("ledger unavailable");
    }
    if (this.ledger.has(message.messageId)) {
      this.duplicates.push(message);
      this.wake();
      return "duplicate";
    }
    this.ledger.add(message.messageId);
    this.accepted.push(message);
    this.wake();
    if (this.hold) await this.hold;
    const text = this.reply?.(message);
    if (text !== undefined && this.adapter) {
      const adapter = this.adapter;
      // The gateway answers after recording, outside this call.
      setImmediate(() => {
        adapter
          .send(message.chat, {
            text,
            idempotencyKey: `turn-${message.messageId}`,
            replyToId: message.replyToId,
            inboundMeta: message.meta,
          })
          .catch(() => {});
      });
    }
    return "accepted";
  };

  /** Resolves once `count` messages were accepted. */
  waitForAccepted(count: number, timeoutMs = 15_000): Promise<InboundMessage[]> {
    return this.waitUntil(() => this.accepted.length >= count, `${count} accepted`, timeoutMs).then(() =>
      this.accepted.slice(),
    );
  }

  waitUntil(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const run = () => {
        if (!check()) return;
        done();
        resolve();
      };
      const timer = setTimeout(() => {
        done();
        reject(
          new Error(
            `fake gateway: waited for ${what}; accepted ${this.accepted.length}, duplicates ${this.duplicates.length}`,
          ),
        );
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(run);
      };
      this.waiters.add(run);
      run();
    });
  }

  private wake(): void {
    for (const w of this.waiters) w();
  }
}

/**
 * A started adapter on a fresh bot mailbox (pushed to `adapters` for the test's cleanup), answered by a
 * fake gateway that echoes; `replies()` is what this adapter sent.
 */
export async function startedAdapter(
  env: EmailEnv,
  adapters: EmailAdapter[],
  overrides: Partial<EmailAdapterConfig> = {},
) {
  const bot = env.nextBot();
  const kv = memoryKv();
  const adapter = newAdapter(env, bot, kv, overrides);
  adapters.push(adapter);
  const gateway = new FakeGateway().attach(adapter);
  await adapter.start(gateway.handler);
  // Each test has its own bot address.
  const replies = () => env.smtp.messages.filter((m) => m.envelope.from === bot.address);
  const waitReplies = (n: number) =>
    eventually(async () => (replies().length >= n ? replies() : undefined), `${n} replies`);
  return { bot, kv, adapter, gateway, replies, waitReplies };
}

/** What `emailEnvPerFile()` gives a test file. */
export interface EmailTestFile {
  /** The file's environment (available from the first test on). */
  readonly env: EmailEnv;
  /** `startedAdapter` on the file's environment; the adapter is stopped after the test. */
  started(overrides?: Partial<EmailAdapterConfig>): ReturnType<typeof startedAdapter>;
  /** Stops `adapter` after the test (for adapters the test built itself). */
  stopAfterTest(adapter: EmailAdapter): void;
}

/**
 * One email environment for all tests of the calling file (started `beforeAll`, closed `afterAll`),
 * with the adapters each test starts stopped after it. Call once at the top level of a test file.
 */
export function emailEnvPerFile(): EmailTestFile {
  let env: EmailEnv | undefined;
  const adapters: EmailAdapter[] = [];
  beforeAll(async () => {
    env = await startEmailEnv();
  });
  afterAll(async () => {
    await env?.close();
  });
  afterEach(async () => {
    for (const a of adapters.splice(0)) await a.stop();
  });
  const current = (): EmailEnv => {
    if (!env) throw new Error("the email environment starts in beforeAll: use it inside a test");
    return env;
  };
  return {
    get env() {
      return current();
    },
    started: (overrides = {}) => startedAdapter(current(), adapters, overrides),
    stopAfterTest: (adapter) => {
      adapters.push(adapter);
    },
  };
}

export function newAdapter(
  env: EmailEnv,
  bot: Bot,
  kv: KeyValueStore,
  overrides?: Partial<EmailAdapterConfig>,
) {
  return createEmailAdapter(env.config(bot, overrides), adapterDeps(kv, env.cacheDir));
}

/** Flags of every message in `bot`'s INBOX, by Message-ID (a separate IMAP session). */
export async function inboxFlags(
  env: EmailEnv,
  user: string,
  password = PASSWORD,
): Promise<Map<string, string[]>> {
  const client = new ImapFlow({
    host: "127.0.0.1",
    port: env.dovecot.imapPort,
    secure: false,
    auth: { user, pass: password },
    logger: false,
  });
  await client.connect();
  const out = new Map<string, string[]>();
  try {
    await client.mailboxOpen("INBOX", { readOnly: true });
    for await (const m of client.fetch("1:*", { envelope: true, flags: true })) {
      out.set(m.envelope?.messageId ?? String(m.uid), [...(m.flags ?? [])]);
    }
  } catch {
    // An empty mailbox answers "1:*" with an error on some servers: no messages.
  } finally {
    await client.logout();
  }
  return out;
}

/** A poll-until helper for facts outside the fake gateway (e.g. mailbox flags). */
export async function eventually<T>(
  fn: () => Promise<T | undefined>,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
