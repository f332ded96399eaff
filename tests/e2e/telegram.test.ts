/**
 * The Telegram adapter end to end against the fake Bot API: receiving by long polling, who is addressed
 * in which chat, forum topics, replies landing where the user wrote.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { InboundMessage } from "../../core/types.js";
import { fixture, type TelegramRig, telegramRig } from "./telegram-helpers.js";

const GROUP = -1001234567890;
const FORUM = -1009876543210;

let rig: TelegramRig;
afterEach(async () => {
  await rig?.close();
});

describe("telegram: receiving", () => {
  it("a DM turn: the user's message reaches the gateway and the reply arrives formatted", async () => {
    rig = await telegramRig();
    await rig.start();
    rig.fake.pushUpdate(await fixture("private-text"));
    await rig.waitForReceived(1);
    const msg = rig.received[0]!;
    expect(msg).toMatchObject({
      platform: "telegram",
      messageId: "111:41",
      chat: { platform: "telegram", chatId: "111" },
      chatType: "dm",
      sender: { id: "111", name: "Ada Lovelace", isBot: false },
      text: "Hello there",
      mentioned: true,
      replyToId: "41",
    });
    expect(msg.chat.threadId).toBeUndefined();

    const result = await rig.adapter.send(msg.chat, {
      text: "**Hi** Ada, see `code` and [docs](https://example.org)",
      replyToId: msg.replyToId,
      idempotencyKey: "t1",
    });
    const [reply] = rig.fake.botMessages(111);
    expect(result.messageIds).toEqual([String(reply!.message_id)]);
    expect(reply!.text).toBe("Hi Ada, see code and docs");
    expect(reply!.entities).toEqual([
      { type: "bold", offset: 0, length: 2 },
      { type: "code", offset: 12, length: 4 },
      { type: "text_link", offset: 21, length: 4, url: "https://example.org" },
    ]);
    // DMs are not quoted: there is only one person to answer.
    expect(reply!.reply_to_message).toBeUndefined();
  });

  it("passes /start through as text for the gateway to greet (and pair) the user", async () => {
    rig = await telegramRig();
    await rig.start();
    rig.fake.userSends({
      chatId: 555,
      fromId: 555,
      text: "/start",
      extra: { entities: [{ type: "bot_command", offset: 0, length: 6 }] },
    });
    rig.fake.userSends({
      chatId: 555,
      fromId: 555,
      text: "/start ref42",
      extra: { entities: [{ type: "bot_command", offset: 0, length: 6 }] },
    });
    await rig.waitForReceived(2);
    expect(rig.received.map((m) => [m.text, m.mentioned, m.sender.id])).toEqual([
      ["/start", true, "555"],
      ["/start ref42", true, "555"],
    ]);
  });

  it("in a group, only a mention, a reply to the bot or /cmd@bot addresses the bot", async () => {
    rig = await telegramRig();
    await rig.start();
    const botMessage = (
      await rig.adapter.send(
        { platform: "telegram", chatId: String(GROUP) },
        { text: "I am here", idempotencyKey: "b" },
      )
    ).messageIds[0]!;
    const other = rig.fake.userSends({ chatId: GROUP, fromId: 333, text: "lunch?" });
    rig.fake.userSends({ chatId: GROUP, text: "hello everyone" });
    rig.fake.pushUpdate(await fixture("group-mention"));
    rig.fake.userSends({ chatId: GROUP, fromId: 222, text: "and times 3?", replyTo: Number(botMessage) });
    rig.fake.userSends({ chatId: GROUP, fromId: 222, text: "yes!", replyTo: other.message_id });
    rig.fake.pushUpdate(await fixture("group-command"));
    rig.fake.userSends({
      chatId: GROUP,
      text: "/new@other_bot",
      extra: { entities: [{ type: "bot_command", offset: 0, length: 14 }] },
    });
    rig.fake.userSends({
      chatId: GROUP,
      text: "ask Herald now",
      extra: { entities: [{ type: "text_mention", offset: 4, length: 6, user: rig.fake.bot }] },
    });
    await rig.waitForReceived(8);
    const seen = rig.received.map((m: InboundMessage) => [m.text, m.mentioned, m.chatType]);
    expect(seen).toEqual([
      ["lunch?", false, "group"],
      ["hello everyone", false, "group"],
      ["what is 2+2?", true, "group"],
      ["and times 3?", true, "group"],
      ["yes!", false, "group"],
      ["/new", true, "group"],
      ["/new@other_bot", false, "group"],
      ["ask Herald now", true, "group"],
    ]);
  });

  it("strips the bot's mention wherever it stands in the text", async () => {
    rig = await telegramRig();
    await rig.start();
    const say = (text: string, offset: number) =>
      rig.fake.userSends({
        chatId: GROUP,
        text,
        extra: { entities: [{ type: "mention", offset, length: 11 }] },
      });
    say("@herald_bot, what's up?", 0);
    say("hey @herald_bot what's up", 4);
    say("thanks @Herald_Bot", 7);
    await rig.waitForReceived(3);
    expect(rig.received.map((m) => [m.text, m.mentioned])).toEqual([
      ["what's up?", true],
      ["hey what's up", true],
      ["thanks", true],
    ]);
  });

  it("answers a group mention quoting the user's message in the first chunk only", async () => {
    rig = await telegramRig();
    await rig.start();
    rig.fake.pushUpdate(await fixture("group-mention"));
    await rig.waitForReceived(1);
    const msg = rig.received[0]!;
    const long = Array.from({ length: 120 }, (_, i) => `Line ${i} ${"lorem ipsum ".repeat(6)}`).join("\n\n");
    await rig.adapter.send(msg.chat, { text: long, replyToId: msg.replyToId, idempotencyKey: "q" });
    const replies = rig.fake.botMessages(GROUP);
    expect(replies.length).toBeGreaterThan(1);
    expect(replies[0]!.reply_to_message?.message_id).toBe(1207);
    for (const later of replies.slice(1)) expect(later.reply_to_message).toBeUndefined();
  });

  it("treats each forum topic as its own thread and answers inside it", async () => {
    rig = await telegramRig();
    await rig.start();
    const benchmarks = rig.fake.createTopic(FORUM, "Benchmarks");
    // A topic the bot opened: its messages all "reply" to the bot's first message.
    const design = rig.fake.createTopic(FORUM, "Design", true);
    const mention = (text: string, threadId: number) =>
      rig.fake.userSends({
        chatId: FORUM,
        threadId,
        text: `@herald_bot ${text}`,
        extra: { entities: [{ type: "mention", offset: 0, length: 11 }] },
      });
    mention("numbers please", benchmarks);
    mention("colours please", design);
    // In a topic, every message "replies" to the topic's first message; that alone is not addressing the bot.
    rig.fake.userSends({ chatId: FORUM, threadId: design, text: "just chatting" });
    await rig.waitForReceived(3);
    const [a, b, c] = rig.received;
    expect(a!.chat).toEqual({ platform: "telegram", chatId: String(FORUM), threadId: String(benchmarks) });
    expect(b!.chat).toEqual({ platform: "telegram", chatId: String(FORUM), threadId: String(design) });
    expect(c).toMatchObject({ text: "just chatting", mentioned: false, chat: { threadId: String(design) } });

    await rig.adapter.sendTyping(a!.chat);
    await rig.adapter.send(a!.chat, { text: "42 ops/s", replyToId: a!.replyToId, idempotencyKey: "a" });
    await rig.adapter.send(b!.chat, { text: "teal", replyToId: b!.replyToId, idempotencyKey: "b" });
    expect(rig.fake.botMessages(FORUM, benchmarks).map((m) => m.text)).toEqual(["42 ops/s"]);
    expect(rig.fake.botMessages(FORUM, design).map((m) => m.text)).toEqual(["teal"]);
    expect(rig.fake.callsTo("sendChatAction")[0]!.params).toMatchObject({
      action: "typing",
      message_thread_id: benchmarks,
    });
  });

  it("reads the real-shaped forum topic fixture as a thread message", async () => {
    rig = await telegramRig();
    await rig.start();
    rig.fake.pushUpdate(await fixture("forum-topic-message"));
    await rig.waitForReceived(1);
    expect(rig.received[0]).toMatchObject({
      chat: { chatId: String(FORUM), threadId: "77" },
      text: "summarise this topic",
      mentioned: true,
    });
  });

  it("keeps order within a chat while other chats go ahead", async () => {
    rig = await telegramRig();
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    const order: string[] = [];
    await rig.start(async (m) => {
      order.push(`start ${m.text}`);
      if (m.text === "A1") await firstHeld;
      order.push(`end ${m.text}`);
      return "accepted";
    });
    rig.fake.userSends({ chatId: 1001, fromId: 1001, text: "A1" });
    rig.fake.userSends({ chatId: 1001, fromId: 1001, text: "A2" });
    rig.fake.userSends({ chatId: 1002, fromId: 1002, text: "B1" });
    await rig.waitForReceived(2);
    // B1 went ahead while A1 was still being recorded; A2 waits for A1.
    expect(order).toEqual(["start A1", "start B1", "end B1"]);
    releaseFirst();
    await rig.waitForReceived(3);
    expect(order.slice(3)).toEqual(["end A1", "start A2", "end A2"]);
  });
});
