/**
 * Email adapter sending against a real SMTP endpoint (and Dovecot for the replies): scheduled reports as
 * new threads, SMTP refusals as PlatformErrors, start-up errors that name the setting to fix.
 */
import { describe, expect, it } from "vitest";
import { PlatformError } from "../../core/errors.js";
import { freePort } from "../helpers/net.js";
import { ALICE, emailEnvPerFile, FakeGateway, memoryKv, newAdapter } from "./email-env.js";

const suite = emailEnvPerFile();
const { started } = suite;

describe("email adapter: scheduled reports and sending", () => {
  it("starts a new thread for email:<address> with the job's subject; a reply continues it", async () => {
    const { bot, adapter, gateway, waitReplies } = await started();
    gateway.reply = undefined;
    const result = await adapter.send(
      { platform: "email", chatId: ALICE },
      {
        text: "# Daily sales\n\nTotal: **10.4M**",
        subject: "Daily sales report",
        idempotencyKey: "cron-7-1",
      },
    );
    await adapter.send({ platform: "email", chatId: ALICE }, { text: "plain", idempotencyKey: "cron-8-1" });
    const [report, untitled] = await waitReplies(2);
    expect(report!.parsed.subject).toBe("Daily sales report");
    expect(report!.parsed.inReplyTo).toBeUndefined();
    expect(report!.parsed.headers.get("auto-submitted")).toBe("auto-generated");
    expect(report!.parsed.html).toContain("<h1>Daily sales</h1>");
    expect(report!.parsed.messageId).toBe(`<${result.messageIds[0]}>`);
    expect(untitled!.parsed.subject).toBe("Herald report");

    await suite.env.mail(bot, {
      from: ALICE,
      to: bot.address,
      subject: "Re: Daily sales report",
      inReplyTo: report!.parsed.messageId!,
      references: [report!.parsed.messageId!],
      text: "Why is it lower than yesterday?",
    });
    const [m] = await gateway.waitForAccepted(1);
    expect(m!.chat).toEqual({ platform: "email", chatId: ALICE, threadId: result.messageIds[0] });
    // A reply to a report starts a new session: the report comes along, quoted.
    expect(m!.text).toBe(
      '(In reply to your message "Daily sales report":)\n> # Daily sales\n>\n> Total: **10.4M**\n\nWhy is it lower than yesterday?',
    );
  });

  it("reports SMTP refusals as PlatformErrors: 4xx retryable, 5xx not; a retry keeps the Message-ID", async () => {
    const { adapter, bot, waitReplies } = await started();
    const chat = { platform: "email", chatId: ALICE };
    suite.env.smtp.failNext(451);
    const temporary = await adapter
      .send(chat, { text: "hi", idempotencyKey: "k-451" })
      .catch((e: unknown) => e);
    expect(temporary).toBeInstanceOf(PlatformError);
    expect((temporary as PlatformError).retryable).toBe(true);
    const retried = await adapter.send(chat, { text: "hi", idempotencyKey: "k-451" });
    const [delivered] = await waitReplies(1);
    expect(delivered!.parsed.messageId).toBe(`<${retried.messageIds[0]}>`);

    suite.env.smtp.failNext(550);
    const permanent = await adapter
      .send(chat, { text: "hi", idempotencyKey: "k-550" })
      .catch((e: unknown) => e);
    expect(permanent).toBeInstanceOf(PlatformError);
    expect((permanent as PlatformError).retryable).toBe(false);
    const missingFile = await adapter
      .send(chat, { text: "file", files: [{ path: "/nonexistent/x.pdf" }], idempotencyKey: "k-file" })
      .catch((e: unknown) => e);
    expect(missingFile).toBeInstanceOf(PlatformError);
    expect((missingFile as PlatformError).retryable).toBe(false);
    const self = await adapter
      .send(
        { platform: "email", chatId: bot.address.toUpperCase() },
        { text: "loop", idempotencyKey: "k-self" },
      )
      .catch((e: unknown) => e);
    expect((self as PlatformError).message).toMatch(/EMAIL_ADDRESS itself/);
    // A chunk already confirmed is not sent again.
    expect(await adapter.send(chat, { text: "hi", idempotencyKey: "k-451" }, { fromChunk: 1 })).toEqual({
      messageIds: [],
    });
  });

  it("refuses to start with a wrong password or an unreachable IMAP server, naming the setting", async () => {
    const bot = suite.env.nextBot();
    const wrong = newAdapter(suite.env, bot, memoryKv(), { password: "nope" });
    suite.stopAfterTest(wrong);
    await expect(wrong.start(new FakeGateway().handler)).rejects.toThrow(/EMAIL_PASSWORD/);
    const closedPort = await freePort();
    const unreachable = newAdapter(suite.env, bot, memoryKv(), { imapPort: closedPort });
    suite.stopAfterTest(unreachable);
    const err = await unreachable.start(new FakeGateway().handler).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformError);
    expect((err as Error).message).toMatch(/EMAIL_IMAP_HOST, EMAIL_IMAP_PORT/);
    expect(unreachable.status().state).not.toBe("running");
  });
});
