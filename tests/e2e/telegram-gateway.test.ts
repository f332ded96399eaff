/**
 * Telegram through the whole gateway: the fake Bot API, the real adapter configured by env as an operator
 * would, the real runner, state, queue and agent, and the scripted fake model.
 */
import { describe, expect, it, vi } from "vitest";
import type { FakeTelegram } from "../fakes/telegram/index.js";
import type { Harness } from "../helpers/gateway-harness.js";
import { numberedCode } from "../helpers/long-reply.js";
import { platformPerTest } from "../helpers/per-test.js";
import { botReplies, fixture, startTelegramGateway } from "./telegram-helpers.js";

const GROUP = -1001234567890;
const FORUM = -1009876543210;

const running = platformPerTest<FakeTelegram>();

const start = (env: Record<string, string> = {}) => startTelegramGateway(running, env);

/** Waits until the bot has `count` messages in the chat (or topic) and returns their texts. */
const mention = { entities: [{ type: "mention", offset: 0, length: 11 }] };
const userTexts = (h: Harness) =>
  JSON.stringify(h.llm.requests.map((r) => r.messages.filter((m) => m.role === "user")));

describe("telegram through the gateway", () => {
  it("answers a DM through the model, with typing shown, once", async () => {
    const { fake, h } = await start();
    fake.pushUpdate(await fixture("private-text"));
    expect(await botReplies(fake, 111, 1)).toEqual(["echo: Hello there"]);
    await h.gateway.runner.outbox.idle();
    expect(fake.callsTo("sendChatAction", 111).length).toBeGreaterThanOrEqual(1);
    expect(fake.callsTo("sendMessage")).toHaveLength(1);
    expect(h.gateway.adapters.get("telegram")?.status?.().state).toBe("running");
  });

  it("greets on /start, and gives an unknown user a pairing code", async () => {
    const { fake } = await start();
    const command = { entities: [{ type: "bot_command", offset: 0, length: 6 }] };
    fake.userSends({ chatId: 111, fromId: 111, text: "/start", extra: command });
    fake.userSends({ chatId: 999, fromId: 999, text: "/start", extra: command });
    expect((await botReplies(fake, 111, 1))[0]).toMatch(/^Hi! I'm Herald/);
    expect((await botReplies(fake, 999, 1))[0]).toMatch(/Your pairing code is [A-Z0-9]+/);
  });

  it("in a group answers a mention (quoting it), a reply to the bot and /cmd@bot, and nothing else", async () => {
    const { fake, h } = await start();
    fake.userSends({ chatId: GROUP, fromId: 111, text: "talking among ourselves" });
    const asked = fake.userSends({
      chatId: GROUP,
      fromId: 111,
      text: "@herald_bot what's the time?",
      extra: mention,
    });
    expect(await botReplies(fake, GROUP, 1)).toEqual(["echo: what's the time?"]);
    const answer = fake.botMessages(GROUP)[0]!;
    expect(answer.reply_to_message?.message_id).toBe(asked.message_id);

    fake.userSends({ chatId: GROUP, fromId: 222, text: "and tomorrow?", replyTo: answer.message_id });
    expect(await botReplies(fake, GROUP, 2)).toEqual(["echo: what's the time?", "echo: and tomorrow?"]);
    fake.userSends({
      chatId: GROUP,
      fromId: 111,
      text: "/help@other_bot",
      extra: { entities: [{ type: "bot_command", offset: 0, length: 15 }] },
    });
    fake.userSends({
      chatId: GROUP,
      fromId: 111,
      text: "/help@herald_bot",
      extra: { entities: [{ type: "bot_command", offset: 0, length: 16 }] },
    });
    const all = await botReplies(fake, GROUP, 3);
    expect(all[2]).toContain("/new");
    await h.gateway.runner.outbox.idle();
    expect(fake.botMessages(GROUP)).toHaveLength(3);
    expect(userTexts(h)).not.toContain("among ourselves");
  });

  it("answers group messages without a mention when TELEGRAM_REQUIRE_MENTION=false", async () => {
    const { fake } = await start({ TELEGRAM_REQUIRE_MENTION: "false" });
    fake.userSends({ chatId: GROUP, fromId: 111, text: "anyone?" });
    expect(await botReplies(fake, GROUP, 1)).toEqual(["echo: anyone?"]);
  });

  it("keeps forum topics apart: each its own session, replies in the topic", async () => {
    const { fake, h } = await start();
    const a = fake.createTopic(FORUM, "Secrets");
    const b = fake.createTopic(FORUM, "Other");
    fake.userSends({
      chatId: FORUM,
      threadId: a,
      fromId: 111,
      text: "@herald_bot the secret is plum",
      extra: mention,
    });
    expect(await botReplies(fake, FORUM, 1, a)).toEqual(["echo: the secret is plum"]);
    fake.userSends({
      chatId: FORUM,
      threadId: b,
      fromId: 111,
      text: "@herald_bot what is the secret?",
      extra: mention,
    });
    expect(await botReplies(fake, FORUM, 1, b)).toEqual(["echo: what is the secret?"]);
    expect(JSON.stringify(h.llm.requests[1]!.messages)).not.toContain("plum");
    // Once the bot answered in a topic, the topic continues without a mention.
    fake.userSends({ chatId: FORUM, threadId: a, fromId: 222, text: "and the colour?" });
    expect(await botReplies(fake, FORUM, 2, a)).toEqual([
      "echo: the secret is plum",
      "echo: and the colour?",
    ]);
    expect(JSON.stringify(h.llm.requests[2]!.messages)).toContain("plum");
  });

  it("delivers a 10,000-character answer with code as valid messages, in order", async () => {
    const { fake, h } = await start();
    const lines = 240;
    const code = numberedCode(lines, 24);
    const text = `Intro **bold**.\n\n\`\`\`python\n${code}\n\`\`\`\n\nOutro with a [link](https://example.org).`;
    expect(text.length).toBeGreaterThan(10_000);
    h.llm.script({ text });
    fake.userSends({ chatId: 111, fromId: 111, text: "long please" });
    await vi.waitFor(() => expect(fake!.botMessages(111).at(-1)?.text).toContain("Outro"), {
      timeout: 15_000,
    });
    await h.gateway.runner.outbox.idle();
    const calls = fake.callsTo("sendMessage");
    expect(calls.length).toBeGreaterThanOrEqual(3);
    expect(calls.every((c) => c.status === 200 && c.params["parse_mode"] === "HTML")).toBe(true);
    const shown = fake.botMessages(111);
    for (const m of shown) expect(m.text!.length).toBeLessThanOrEqual(4096);
    // Every message holding code holds it in a python code block (the fence closed and reopened).
    for (const m of shown.filter((x) => x.text!.includes("print("))) {
      expect(m.entities).toContainEqual(expect.objectContaining({ type: "pre", language: "python" }));
    }
    const order = [
      ...shown
        .map((m) => m.text)
        .join("\n")
        .matchAll(/print\("line (\d+)"\)/g),
    ].map((m) => Number(m[1]));
    expect(order).toEqual(Array.from({ length: lines }, (_, i) => i));
  });

  it("shows tool progress in one silent message and deletes it when the answer is out", async () => {
    const { fake, h } = await start();
    h.llm.script({ toolCalls: [{ name: "session_search", arguments: { query: "tea" } }] }, { text: "Done." });
    fake.userSends({ chatId: 111, fromId: 111, text: "search my history" });
    await vi.waitFor(() => expect(fake!.botMessages(111).map((m) => m.text)).toEqual(["Done."]), {
      timeout: 10_000,
    });
    await h.gateway.runner.outbox.idle();
    const progress = fake
      .callsTo("sendMessage")
      .find((c) => String(c.params["text"]).includes("session_search"));
    expect(progress?.params).toMatchObject({ disable_notification: true });
    await vi.waitFor(() => expect(fake!.callsTo("deleteMessage")).toHaveLength(1));
  });
});
