/**
 * Email adapter faults against a real Dovecot: restarts never answer twice nor skip a mail (UID and
 * UIDVALIDITY tracking, \Seen only after recording), a dropped IMAP connection reconnects and misses
 * nothing, a server without IDLE is polled, a gateway that cannot record gets the mail again.
 */
import { chownSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ImapFlow } from "imapflow";
import { afterEach, describe, expect, it } from "vitest";
import type { EmailAdapter } from "../../adapters/email/index.js";
import {
  ALICE,
  type EmailEnv,
  eventually,
  FakeGateway,
  inboxFlags,
  memoryKv,
  newAdapter,
  PASSWORD,
  startEmailEnv,
  vouched,
} from "./email-env.js";

const adapters: EmailAdapter[] = [];
const envs: EmailEnv[] = [];

afterEach(async () => {
  for (const a of adapters.splice(0)) await a.stop();
  for (const e of envs.splice(0)) await e.close();
});

async function newEnv(options: { imapCapability?: string } = {}): Promise<EmailEnv> {
  const env = await startEmailEnv(options);
  envs.push(env);
  return env;
}

function track(adapter: EmailAdapter): EmailAdapter {
  adapters.push(adapter);
  return adapter;
}

/** Marks the message with this Message-ID as read, as a person in a mail client would. */
async function markRead(env: EmailEnv, user: string, messageId: string): Promise<void> {
  const client = new ImapFlow({
    host: "127.0.0.1",
    port: env.dovecot.imapPort,
    secure: false,
    auth: { user, pass: PASSWORD },
    logger: false,
  });
  await client.connect();
  try {
    await client.mailboxOpen("INBOX");
    const uids = await client.search({ header: { "message-id": messageId } }, { uid: true });
    if (!Array.isArray(uids) || uids.length !== 1) throw new Error(`markRead: ${messageId} not found`);
    await client.messageFlagsAdd(String(uids[0]), ["\\Seen"], { uid: true });
  } finally {
    await client.logout();
  }
}

const mailFrom = (n: string, to: string) => ({
  from: ALICE,
  to,
  subject: `Question ${n}`,
  text: `question ${n}`,
  messageId: `<${n}@example.test>`,
});

const replyCount = (env: EmailEnv, from: string) =>
  env.smtp.messages.filter((m) => m.envelope.from === from).length;

describe("email adapter: restarts", () => {
  it("a restart during a turn answers exactly once: the mail comes back only as a duplicate", async () => {
    const env = await newEnv();
    const bot = env.nextBot();
    const kv = memoryKv();
    const ledger = new Set<string>();

    // Crash in the middle of a turn: the gateway recorded the mail, the adapter never got to mark it.
    const first = track(newAdapter(env, bot, kv));
    const gateway1 = new FakeGateway(ledger).attach(first);
    gateway1.reply = undefined;
    gateway1.hold = new Promise(() => {});
    await first.start(gateway1.handler);
    await env.mail(bot, mailFrom("crash-1", bot.address));
    const [inFlight] = await gateway1.waitForAccepted(1);
    await first.stop();
    // A mail that arrives while the gateway is down.
    await env.mail(bot, mailFrom("while-down", bot.address));

    const second = track(newAdapter(env, bot, kv));
    const gateway2 = new FakeGateway(ledger).attach(second);
    await second.start(gateway2.handler);
    await gateway2.waitUntil(
      () => gateway2.duplicates.length === 1 && gateway2.accepted.length === 1,
      "redelivery",
    );
    expect(gateway2.duplicates.map((m) => m.messageId)).toEqual(["crash-1@example.test"]);
    expect(gateway2.accepted.map((m) => m.messageId)).toEqual(["while-down@example.test"]);

    // The gateway reruns the unfinished turn; its outbox delivers the reply through the new adapter.
    await second.send(inFlight!.chat, {
      text: "answer to crash-1",
      inboundMeta: inFlight!.meta,
      idempotencyKey: "turn-crash-1@example.test",
    });
    await eventually(async () => (replyCount(env, bot.address) === 2 ? true : undefined), "two replies");
    const replies = env.smtp.messages.filter((m) => m.envelope.from === bot.address);
    expect(replies.map((r) => r.parsed.inReplyTo).sort()).toEqual([
      "<crash-1@example.test>",
      "<while-down@example.test>",
    ]);
    const flags = await eventually(async () => {
      const f = await inboxFlags(env, bot.user);
      return f.get("<crash-1@example.test>")?.includes("\\Seen") ? f : undefined;
    }, "crash-1 marked \\Seen after redelivery");
    expect(flags.get("<while-down@example.test>")).toContain("\\Seen");

    // A third start finds nothing new: no repeat.
    await second.stop();
    const third = track(newAdapter(env, bot, kv));
    const gateway3 = new FakeGateway(ledger).attach(third);
    await third.start(gateway3.handler);
    await env.mail(bot, mailFrom("after", bot.address));
    await gateway3.waitForAccepted(1);
    expect(gateway3.accepted.map((m) => m.messageId)).toEqual(["after@example.test"]);
    expect(gateway3.duplicates).toEqual([]);
  });

  it("tracks UIDs: mail read by a person while the adapter was down is still answered, old read mail is not", async () => {
    const env = await newEnv();
    const bot = env.nextBot();
    const kv = memoryKv();
    await env.mail(bot, mailFrom("old-read", bot.address));
    await markRead(env, bot.user, "<old-read@example.test>");
    await env.mail(bot, mailFrom("old-unread", bot.address));

    const first = track(newAdapter(env, bot, kv));
    const gateway1 = new FakeGateway().attach(first);
    await first.start(gateway1.handler);
    await gateway1.waitForAccepted(1);
    expect(gateway1.accepted.map((m) => m.messageId)).toEqual(["old-unread@example.test"]);
    await eventually(async () => {
      const f = await inboxFlags(env, bot.user);
      return f.get("<old-unread@example.test>")?.includes("\\Seen") ? true : undefined;
    }, "old-unread marked \\Seen");
    await first.stop();

    await env.mail(bot, mailFrom("read-while-down", bot.address));
    await markRead(env, bot.user, "<read-while-down@example.test>");
    const second = track(newAdapter(env, bot, kv));
    const gateway2 = new FakeGateway().attach(second);
    await second.start(gateway2.handler);
    await env.mail(bot, mailFrom("fresh", bot.address));
    await gateway2.waitForAccepted(2);
    expect(gateway2.accepted.map((m) => m.messageId)).toEqual([
      "read-while-down@example.test",
      "fresh@example.test",
    ]);
  });

  it("after the mailbox's UIDVALIDITY changes, answers only what is still unread", async () => {
    const env = await newEnv();
    const bot = env.nextBot();
    const kv = memoryKv();
    const adapter = track(newAdapter(env, bot, kv));
    const gateway = new FakeGateway().attach(adapter);
    await adapter.start(gateway.handler);
    await env.mail(bot, mailFrom("before", bot.address));
    await gateway.waitForAccepted(1);
    await eventually(async () => {
      const f = await inboxFlags(env, bot.user);
      return f.get("<before@example.test>")?.includes("\\Seen") ? true : undefined;
    }, "before marked \\Seen");
    const validityBefore = kv.get("imap:uidvalidity");

    // Recreate the mailbox's UID list with a new UIDVALIDITY while the server is down (flags survive in
    // the maildir file names), and let a mail arrive meanwhile.
    await env.dovecot.halt();
    const box = join(env.dovecot.dir, "mail", bot.user);
    for (const name of readdirSync(box)) {
      if (name.startsWith("dovecot")) rmSync(join(box, name), { recursive: true, force: true });
    }
    const files = readdirSync(join(box, "cur")).map((name) => name.split(":")[0]);
    const uidlist = [
      `3 V${Number(validityBefore) + 1000} N${files.length + 1}`,
      ...files.map((f, i) => `${i + 1} :${f}`),
    ];
    writeFileSync(join(box, "dovecot-uidlist"), `${uidlist.join("\n")}\n`);
    chownSync(join(box, "dovecot-uidlist"), statSync(box).uid, statSync(box).gid);
    env.dovecot.deliverOffline(
      vouched(readFileSync(join(import.meta.dirname, "../fixtures/email/inline-reply.eml"), "utf8")),
      bot.user,
    );
    await env.dovecot.restart();

    await gateway.waitForAccepted(2);
    expect(gateway.accepted.map((m) => m.messageId)).toEqual([
      "before@example.test",
      "inline-3c9d@example.test",
    ]);
    expect(gateway.duplicates).toEqual([]);
    expect(kv.get("imap:uidvalidity")).toBe(String(Number(validityBefore) + 1000));
    await env.mail(bot, mailFrom("after", bot.address));
    await gateway.waitForAccepted(3);
    expect(gateway.accepted.map((m) => m.messageId).slice(2)).toEqual(["after@example.test"]);
  });
});

describe("email adapter: connection faults", () => {
  it("reconnects after the IMAP server drops and misses no mail that arrived meanwhile", async () => {
    const env = await newEnv();
    const bot = env.nextBot();
    const adapter = track(newAdapter(env, bot, memoryKv()));
    const gateway = new FakeGateway().attach(adapter);
    await adapter.start(gateway.handler);
    await env.mail(bot, mailFrom("a", bot.address));
    await gateway.waitForAccepted(1);
    // The first answer is out before the server goes down (its relay into the mailbox needs Dovecot,
    // and this stand-in gateway has no outbox to retry it).
    await eventually(async () => (replyCount(env, bot.address) === 1 ? true : undefined), "first reply");

    await env.dovecot.halt();
    await eventually(
      async () => (adapter.status().state === "reconnecting" ? true : undefined),
      "reconnecting",
    );
    env.dovecot.deliverOffline(
      vouched(
        [
          "From: alice@example.test",
          `To: ${bot.address}`,
          "Subject: During the outage",
          "Message-ID: <b@example.test>",
          "",
          "question b",
          "",
        ].join("\r\n"),
      ),
      bot.user,
    );
    await env.dovecot.restart();
    await gateway.waitForAccepted(2);
    await eventually(async () => (adapter.status().state === "running" ? true : undefined), "running again");
    // IDLE works on the new connection too (the poll interval is a minute).
    await env.mail(bot, mailFrom("c", bot.address));
    await gateway.waitForAccepted(3);
    expect(gateway.accepted.map((m) => m.messageId)).toEqual([
      "a@example.test",
      "b@example.test",
      "c@example.test",
    ]);
    expect(gateway.duplicates).toEqual([]);
    await eventually(async () => (replyCount(env, bot.address) === 3 ? true : undefined), "three replies");
  });

  it("polls a server without IDLE", async () => {
    const capability =
      "IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE SORT UIDPLUS ESEARCH NAMESPACE UNSELECT CHILDREN LITERAL+";
    const env = await newEnv({ imapCapability: capability });
    const bot = env.nextBot();
    const probe = new ImapFlow({
      host: "127.0.0.1",
      port: env.dovecot.imapPort,
      secure: false,
      auth: { user: bot.user, pass: PASSWORD },
      logger: false,
    });
    await probe.connect();
    const hasIdle = probe.capabilities.has("IDLE");
    await probe.logout();
    expect(hasIdle).toBe(false);

    const adapter = track(newAdapter(env, bot, memoryKv(), { pollIntervalMs: 300 }));
    const gateway = new FakeGateway().attach(adapter);
    await adapter.start(gateway.handler);
    await env.mail(bot, mailFrom("polled-1", bot.address));
    await env.mail(bot, mailFrom("polled-2", bot.address));
    await gateway.waitForAccepted(2);
    expect(gateway.accepted.map((m) => m.messageId)).toEqual([
      "polled-1@example.test",
      "polled-2@example.test",
    ]);
  });

  it("leaves a mail unread when the gateway cannot record it, and hands it over again", async () => {
    const env = await newEnv();
    const bot = env.nextBot();
    const adapter = track(newAdapter(env, bot, memoryKv(), { pollIntervalMs: 300 }));
    const gateway = new FakeGateway().attach(adapter);
    gateway.failNext = 2;
    await adapter.start(gateway.handler);
    await env.mail(bot, mailFrom("retry", bot.address));
    await gateway.waitForAccepted(1);
    expect(gateway.failNext).toBe(0);
    expect(gateway.accepted.map((m) => m.messageId)).toEqual(["retry@example.test"]);
    await eventually(async () => {
      const f = await inboxFlags(env, bot.user);
      return f.get("<retry@example.test>")?.includes("\\Seen") ? true : undefined;
    }, "retry marked \\Seen");
  });
});
