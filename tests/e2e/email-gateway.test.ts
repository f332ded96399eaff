/**
 * Email through the whole gateway: a real Dovecot and SMTP endpoint, the email adapter configured by env
 * as an operator would, the real runner, state, queue, agent and cron, and the scripted fake model.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Harness, startHarness } from "../helpers/gateway-harness.js";
import { ALICE, type Bot, type EmailEnv, eventually, MALLORY, startEmailEnv } from "./email-env.js";

let env: EmailEnv;
let harness: Harness | undefined;

beforeAll(async () => {
  env = await startEmailEnv();
});
afterAll(async () => {
  await env?.close();
});
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

async function start(extraEnv: Record<string, string> = {}): Promise<{ h: Harness; bot: Bot }> {
  const bot = env.nextBot();
  harness = await startHarness({
    env: {
      ...env.gatewayEnv(bot),
      ...extraEnv,
    },
  });
  return { h: harness, bot };
}

/** What the bot sent, in order. */
const sentBy = (bot: Bot) => env.smtp.messages.filter((m) => m.envelope.from === bot.address);

async function waitSent(bot: Bot, count: number) {
  return eventually(
    async () => (sentBy(bot).length >= count ? sentBy(bot) : undefined),
    `${count} mails sent`,
    20_000,
  );
}

/** The user messages of the model request `index`. */
function userContents(h: Harness, index: number): string[] {
  return (h.llm.requests[index]?.messages ?? [])
    .filter((m) => m.role === "user")
    .map((m) => String(m.content));
}

describe("email through the gateway", () => {
  it("answers in the thread through the model; a reply to the answer continues the session without the quote", async () => {
    const { h, bot } = await start();
    await env.mail(bot, {
      from: `Alice Example <${ALICE}>`,
      to: bot.address,
      subject: "Trip to Lisbon",
      text: "Find me a hotel near the river.",
      messageId: "<gw-trip-1@example.test>",
    });
    const [answer] = await waitSent(bot, 1);
    expect(answer!.envelope.to).toEqual([ALICE]);
    expect(answer!.parsed.subject).toBe("Re: Trip to Lisbon");
    expect(answer!.parsed.inReplyTo).toBe("<gw-trip-1@example.test>");
    expect(answer!.parsed.text).toContain("echo:");
    expect(answer!.parsed.text).toContain("Find me a hotel near the river.");
    expect(h.gateway.adapters.get("email")?.status?.().state).toBe("running");

    await env.mail(bot, {
      from: ALICE,
      to: bot.address,
      subject: "Re: Trip to Lisbon",
      inReplyTo: answer!.parsed.messageId!,
      references: ["<gw-trip-1@example.test>", answer!.parsed.messageId!],
      text: `Under 150 EUR, please.\n\nOn Tue, 3 Jun 2025 at 10:02, Herald <${bot.address}> wrote:\n> ${answer!.parsed.text?.split("\n")[0]}\n`,
    });
    const [, second] = await waitSent(bot, 2);
    expect(second!.parsed.inReplyTo).not.toBe(answer!.parsed.inReplyTo);
    expect(second!.parsed.subject).toBe("Re: Trip to Lisbon");
    // The second model call carries the first exchange: one session per thread.
    const users = userContents(h, 1);
    expect(users).toHaveLength(2);
    expect(users[0]).toContain("Find me a hotel near the river.");
    expect(users[1]).toContain("Under 150 EUR, please.");
    expect(users[1]).not.toContain("wrote:");
    expect(h.llm.requests[1]?.messages.some((m) => m.role === "assistant")).toBe(true);
  });

  it("sends nothing to a stranger (no pairing code), an auto-reply or a mailing list", async () => {
    const { h, bot } = await start();
    await env.mail(bot, { from: MALLORY, to: bot.address, subject: "Hello", text: "Who are you?" });
    await env.mail(bot, {
      from: ALICE,
      to: bot.address,
      subject: "Automatic reply: Hello",
      text: "I am away.",
      headers: { "Auto-Submitted": "auto-replied" },
    });
    await env.mail(bot, {
      from: ALICE,
      to: bot.address,
      subject: "[team] news",
      text: "List mail.",
      list: { id: "team.lists.example.test" },
    });
    await env.mail(bot, { from: ALICE, to: bot.address, subject: "Marker", text: "ping" });
    const [only] = await waitSent(bot, 1);
    expect(only!.parsed.text).toContain("ping");
    await h.gateway.runner.outbox.idle();
    expect(sentBy(bot).map((m) => m.envelope.to)).toEqual([[ALICE]]);
    expect(h.llm.requests).toHaveLength(1);
  });

  it("answers an address allowed in GATEWAY_ALLOWED_USERS as email:<address>", async () => {
    const { bot } = await start({ GATEWAY_ALLOWED_USERS: `telegram:111,email:${MALLORY.toUpperCase()}` });
    await env.mail(bot, { from: MALLORY, to: bot.address, subject: "Hello", text: "Approved now?" });
    const [reply] = await waitSent(bot, 1);
    expect(reply!.envelope.to).toEqual([MALLORY]);
  });

  it("mail waiting at start is read before the runner loads: the stranger gets nothing, the allowed senders an answer each", async () => {
    const bot = env.nextBot();
    const stranger = "eve@example.test";
    await env.mail(bot, { from: stranger, to: bot.address, subject: "Hi", text: "Let me in." });
    await env.mail(bot, { from: MALLORY, to: bot.address, subject: "Hi", text: "Allowed by the gateway." });
    await env.mail(bot, { from: ALICE, to: bot.address, subject: "Hi", text: "Allowed by the platform." });
    // MALLORY is admitted by the gateway's access policy, which the adapter asks while the runner loads.
    harness = await startHarness({
      env: { ...env.gatewayEnv(bot), GATEWAY_ALLOWED_USERS: `email:${MALLORY}` },
    });
    await waitSent(bot, 2);
    await harness.gateway.runner.outbox.idle();
    expect(
      sentBy(bot)
        .flatMap((m) => m.envelope.to)
        .sort(),
    ).toEqual([ALICE, MALLORY]);
    expect(harness.llm.requests).toHaveLength(2);
  });

  it("a crash during a turn answers the mail exactly once after the restart", async () => {
    const { h, bot } = await start();
    h.llm.script({ text: "too late", delayMs: 20_000 });
    await env.mail(bot, {
      from: ALICE,
      to: bot.address,
      subject: "Slow one",
      text: "Take your time.",
      messageId: "<gw-slow@example.test>",
    });
    await eventually(
      async () => (h.llm.requests.length === 1 ? true : undefined),
      "the turn reached the model",
    );
    await h.crash();
    await h.start();
    const [reply] = await waitSent(bot, 1);
    expect(reply!.parsed.inReplyTo).toBe("<gw-slow@example.test>");
    expect(reply!.parsed.text).toContain("Take your time.");
    await h.gateway.runner.outbox.idle();
    await env.mail(bot, { from: ALICE, to: bot.address, subject: "Next", text: "And now?" });
    await waitSent(bot, 2);
    await h.gateway.runner.outbox.idle();
    const replies = sentBy(bot);
    expect(
      replies.map((r) => r.parsed.inReplyTo).filter((id) => id === "<gw-slow@example.test>"),
    ).toHaveLength(1);
    expect(replies).toHaveLength(2);
  });

  it("delivers a scheduled report to email:<address> as a new thread named after the job; a reply continues it", async () => {
    const { h, bot } = await start();
    const caller = {
      chat: { platform: "email", chatId: ALICE, threadId: "setup@example.test" },
      userId: ALICE,
    };
    const job = await h.gateway.cron.api.create(
      {
        schedule: "in 6h",
        prompt: "Write the daily sales report.",
        deliver: `email:${ALICE}`,
        name: "Daily sales report",
      },
      caller,
    );
    await h.gateway.cron.api.runNow(job.id, caller);
    const [report] = await waitSent(bot, 1);
    expect(report!.envelope.to).toEqual([ALICE]);
    expect(report!.parsed.subject).toBe("Daily sales report");
    expect(report!.parsed.inReplyTo).toBeUndefined();
    expect(report!.parsed.text).toContain("Write the daily sales report.");

    await env.mail(bot, {
      from: ALICE,
      to: bot.address,
      subject: "Re: Daily sales report",
      inReplyTo: report!.parsed.messageId!,
      references: [report!.parsed.messageId!],
      text: "Why is EMEA down?",
    });
    const [, answer] = await waitSent(bot, 2);
    // The reply's session is new; the model still sees what the user answers.
    const asked = userContents(h, h.llm.requests.length - 1).at(-1);
    expect(asked).toContain("Why is EMEA down?");
    expect(asked).toContain('In reply to your message "Daily sales report"');
    expect(asked).toContain("> echo: ");
    expect(answer!.parsed.subject).toBe("Re: Daily sales report");
    expect([answer!.parsed.references].flat()).toContain(report!.parsed.messageId);
  });
});
