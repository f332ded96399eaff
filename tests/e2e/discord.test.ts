/**
 * Discord adapter, inbound side, end to end: the real discord.js client against the fake Discord
 * (REST + gateway WebSocket), with a recording handler in place of the gateway.
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type DiscordEnv, IDS, startDiscordEnv } from "./discord-env.js";

let env: DiscordEnv | undefined;

afterEach(async () => {
  await env?.stop();
  env = undefined;
});

describe("discord inbound", () => {
  it("connects with the intents and partials DMs need and reports running", async () => {
    env = await startDiscordEnv();
    const identify = env.fake.gateway.received(2)[0]?.d as { intents: number; token: string };
    const GUILDS = 1 << 0;
    const GUILD_MESSAGES = 1 << 9;
    const DIRECT_MESSAGES = 1 << 12;
    const MESSAGE_CONTENT = 1 << 15;
    for (const intent of [GUILDS, GUILD_MESSAGES, DIRECT_MESSAGES, MESSAGE_CONTENT]) {
      expect(identify.intents & intent).toBe(intent);
    }
    expect(env.adapter.status().state).toBe("running");
  });

  it("passes a DM on as a mentioned dm message with a stable id and the sender's user id", async () => {
    env = await startDiscordEnv();
    const sent = env.fake.userSays({
      channelId: IDS.aliceDm,
      content: "hello, can you help me plan a trip?",
    });
    const msg = await env.nextMessage(1);
    expect(msg).toMatchObject({
      platform: "discord",
      messageId: sent["id"],
      chat: { platform: "discord", chatId: IDS.aliceDm },
      chatType: "dm",
      sender: { id: IDS.alice, name: "Alice" },
      text: "hello, can you help me plan a trip?",
      mentioned: true,
    });
    expect(msg.chat.threadId).toBeUndefined();
  });

  it("marks server messages mentioned only for @bot, a reply to the bot, or the bot's role, and strips the mention", async () => {
    env = await startDiscordEnv();
    const { fake } = env;
    fake.userSays({ channelId: IDS.general, content: "just chatting, nobody asked the bot" });
    fake.userSays({ channelId: IDS.general, content: `<@${IDS.bot}> what is the capital of France?` });
    fake.userSays({ channelId: IDS.general, content: `hey <@&${IDS.botRole}> are you there?` });
    fake.userSays({ channelId: IDS.general, content: `<@&${IDS.modRole}> please look` });
    fake.userSays({ channelId: IDS.general, content: "@everyone meeting now" });
    await env.nextMessage(5);
    const [plain, mention, role, otherRole, everyone] = env.received;
    expect(plain).toMatchObject({ chatType: "group", mentioned: false, chat: { chatId: IDS.general } });
    expect(mention).toMatchObject({ mentioned: true, text: "what is the capital of France?" });
    expect(role).toMatchObject({ mentioned: true, text: "hey are you there?" });
    expect(otherRole).toMatchObject({ mentioned: false, text: "@Moderators please look" });
    expect(everyone?.mentioned).toBe(false);

    // A reply to one of the bot's messages counts as addressing it.
    await env.adapter.send(
      { platform: "discord", chatId: IDS.general },
      { text: "Paris.", idempotencyKey: "k1" },
    );
    const botMessageId = fake.posted[0]!.id;
    fake.userSays({ channelId: IDS.general, content: "and of Italy?", replyTo: botMessageId });
    const reply = await env.nextMessage(6);
    expect(reply).toMatchObject({ mentioned: true, text: "and of Italy?" });
    // A reply to a person does not.
    fake.userSays({ channelId: IDS.general, content: "agreed", replyTo: env.received[0]!.messageId });
    expect((await env.nextMessage(7)).mentioned).toBe(false);
    // Herald's commands typed as text address it; another bot's do not.
    fake.userSays({ channelId: IDS.general, content: "/status" });
    fake.userSays({ channelId: IDS.general, content: "/shrug whatever" });
    await env.nextMessage(9);
    expect(env.received.slice(7).map((m) => [m.text, m.mentioned])).toEqual([
      ["/status", true],
      ["/shrug whatever", false],
    ]);
  });

  it("gives a thread its own chat (parent channel + thread id) and a group chat type", async () => {
    env = await startDiscordEnv();
    const thread = env.fake.createThread(IDS.general, "trip planning");
    env.fake.userSays({ channelId: thread["id"], content: `<@${IDS.bot}> start here` });
    env.fake.userSays({ channelId: thread["id"], content: "follow-up without a mention" });
    env.fake.userSays({ channelId: IDS.general, content: `<@${IDS.bot}> in the channel` });
    await env.nextMessage(3);
    // Different channels have separate queues: find each by its text.
    const byText = (t: string) => env!.received.find((m) => m.text === t);
    const [first, second, channel] = ["start here", "follow-up without a mention", "in the channel"].map(
      byText,
    );
    expect(first).toMatchObject({
      chat: { chatId: IDS.general, threadId: thread["id"] },
      chatType: "group",
      mentioned: true,
    });
    expect(second).toMatchObject({ chat: { chatId: IDS.general, threadId: thread["id"] }, mentioned: false });
    expect(channel?.chat.threadId).toBeUndefined();
  });

  it("finds the parent of a thread it has not seen created", async () => {
    env = await startDiscordEnv();
    const thread = env.fake.createThread(IDS.random, "made while offline", IDS.bob, false);
    env.fake.userSays({ channelId: thread["id"], content: `<@${IDS.bot}> hello from an old thread` });
    const msg = await env.nextMessage(1);
    expect(msg.chat).toEqual({ platform: "discord", chatId: IDS.random, threadId: thread["id"] });
    expect(env.fake.requests.some((r) => r.method === "GET" && r.path === `/channels/${thread["id"]}`)).toBe(
      true,
    );
  });

  it("ignores its own messages and other bots unless allowed", async () => {
    env = await startDiscordEnv();
    await env.adapter.send(
      { platform: "discord", chatId: IDS.general },
      { text: "I said this", idempotencyKey: "own" },
    );
    env.fake.userSays({ channelId: IDS.general, authorId: IDS.otherBot, content: `<@${IDS.bot}> beep` });
    env.fake.userSays({ channelId: IDS.general, content: "a person" });
    const msg = await env.nextMessage(1);
    expect(msg.text).toBe("a person");
    // The bot's own MESSAGE_CREATE was dispatched by the fake but never passed on.
    expect(env.fake.gateway.frames.filter((f) => f.t === "MESSAGE_CREATE")).toHaveLength(3);
    expect(env.received).toHaveLength(1);

    const allowed = await startDiscordEnv({ adapter: { allowBots: true } });
    try {
      allowed.fake.userSays({
        channelId: IDS.general,
        authorId: IDS.otherBot,
        content: `<@${IDS.bot}> beep`,
      });
      const fromBot = await allowed.nextMessage(1);
      expect(fromBot).toMatchObject({
        sender: { id: IDS.otherBot, isBot: true },
        text: "beep",
        mentioned: true,
      });
    } finally {
      await allowed.stop();
    }
  });

  it("downloads attachments into the cache and passes them on; an oversized one becomes a note", async () => {
    env = await startDiscordEnv({ adapter: { mediaMaxBytes: 1024 } });
    const png = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");
    env.fake.userSays({
      channelId: IDS.aliceDm,
      content: "what is in these?",
      attachments: [
        { fileName: "photo.png", data: png, contentType: "image/png" },
        { fileName: "notes.txt", data: Buffer.from("buy milk"), contentType: "text/plain; charset=utf-8" },
        {
          fileName: "huge.bin",
          data: Buffer.alloc(10),
          contentType: "application/octet-stream",
          declaredSize: 5_000_000,
        },
      ],
    });
    const msg = await env.nextMessage(1);
    expect(msg.attachments).toHaveLength(2);
    const [image, doc] = msg.attachments!;
    expect(image).toMatchObject({
      kind: "image",
      fileName: "photo.png",
      mimeType: "image/png",
      sizeBytes: png.length,
    });
    expect(readFileSync(image!.path)).toEqual(png);
    expect(image!.path.startsWith(env.cacheDir)).toBe(true);
    expect(doc).toMatchObject({ kind: "document", mimeType: "text/plain" });
    expect(readFileSync(doc!.path, "utf8")).toBe("buy milk");
    expect(msg.text).toContain("what is in these?");
    expect(msg.text).toMatch(/huge\.bin .*not received: larger than/);
  });

  it("stops the download when a file grows past the cap despite its declared size", async () => {
    env = await startDiscordEnv({ adapter: { mediaMaxBytes: 1024 } });
    env.fake.userSays({
      channelId: IDS.aliceDm,
      content: "",
      attachments: [
        {
          fileName: "liar.bin",
          data: Buffer.alloc(4096, 1),
          contentType: "application/octet-stream",
          declaredSize: 100,
        },
      ],
    });
    const msg = await env.nextMessage(1);
    expect(msg.attachments ?? []).toHaveLength(0);
    expect(msg.text).toMatch(/liar\.bin not received: larger than/);
  });

  it("passes a voice message on as voice", async () => {
    env = await startDiscordEnv();
    env.fake.userSays({
      channelId: IDS.aliceDm,
      content: "",
      attachments: [
        { fileName: "voice-message.ogg", data: Buffer.from("OggS"), contentType: "audio/ogg", voice: true },
      ],
    });
    const msg = await env.nextMessage(1);
    expect(msg.attachments?.[0]).toMatchObject({ kind: "voice", mimeType: "audio/ogg" });
  });

  it("keeps a channel's messages in order even when the handler is slow", async () => {
    const order: string[] = [];
    env = await startDiscordEnv({
      outcome: async (m) => {
        await new Promise((r) => setTimeout(r, m.text === "one" ? 150 : 0));
        order.push(m.text);
        return "accepted" as const;
      },
    });
    for (const text of ["one", "two", "three"]) env.fake.userSays({ channelId: IDS.aliceDm, content: text });
    await vi.waitFor(() => expect(order).toEqual(["one", "two", "three"]));
  });

  it("skips a malformed MESSAGE_CREATE and keeps receiving", async () => {
    env = await startDiscordEnv();
    env.fake.gateway.dispatch("MESSAGE_CREATE", { id: "1", channel_id: IDS.general, nonsense: true });
    env.fake.userSays({
      channelId: IDS.general,
      content: "after the bad one",
      overrides: { author: undefined },
    });
    env.fake.userSays({ channelId: IDS.aliceDm, content: "still here" });
    const msg = await env.nextMessage(1);
    expect(msg.text).toBe("still here");
    expect(env.adapter.status().state).toBe("running");
  });
});
