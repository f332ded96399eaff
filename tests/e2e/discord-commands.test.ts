/**
 * Discord adapter end to end: native slash commands (registered only when changed, answered through
 * the interaction) and auto-threads (a mention in a channel answered in a new thread).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { InboundMessage } from "../../core/types.js";
import { type DiscordEnv, IDS, recorder, startDiscordEnv } from "./discord-env.js";

let env: DiscordEnv | undefined;

afterEach(async () => {
  await env?.stop();
  env = undefined;
});

const commandPuts = (e: DiscordEnv) =>
  e.fake.requests.filter((r) => r.method === "PUT" && /^\/applications\/\d+\/commands$/.test(r.path));

describe("discord slash commands", () => {
  it("registers /new /stop /status /help once, and not again on restart when unchanged", async () => {
    env = await startDiscordEnv({ adapter: { registerCommands: true } });
    await vi.waitFor(() => expect(commandPuts(env!)).toHaveLength(1));
    expect(env.fake.world.commands.map((c) => c["name"])).toEqual(["new", "stop", "status", "help"]);

    await env.adapter.stop();
    const again = env.newAdapter({ registerCommands: true });
    await again.start(recorder([]));
    await new Promise((r) => setTimeout(r, 100));
    expect(commandPuts(env)).toHaveLength(1);

    env.kv.delete("commands.hash"); // e.g. a new Herald version changed the set
    const third = env.newAdapter({ registerCommands: true });
    await again.stop();
    await third.start(recorder([]));
    await vi.waitFor(() => expect(commandPuts(env!)).toHaveLength(2));
  });

  it("turns a slash command into the text command and answers through the interaction", async () => {
    env = await startDiscordEnv({ outcome: () => "command" });
    const interaction = env.fake.runCommand(IDS.general, "status");
    const msg = await env.nextMessage(1);
    expect(msg).toMatchObject({
      messageId: interaction.id,
      text: "/status",
      mentioned: true,
      chatType: "group",
      chat: { chatId: IDS.general },
      sender: { id: IDS.alice },
    });
    expect(interaction.callbacks).toEqual([5]); // deferred at once ("thinking…")
    await env.adapter.send(msg.chat, {
      text: "Session: none yet",
      replyToId: msg.replyToId,
      idempotencyKey: "c1",
    });
    expect(interaction.reply).toBe("Session: none yet");
    expect(env.fake.posted).toHaveLength(0);
  });

  it("works in DMs and removes the placeholder when the gateway drops the command", async () => {
    env = await startDiscordEnv({ outcome: () => "unauthorized" });
    const interaction = env.fake.runCommand(IDS.aliceDm, "new");
    const msg = await env.nextMessage(1);
    expect(msg).toMatchObject({ chatType: "dm", chat: { chatId: IDS.aliceDm }, text: "/new" });
    await vi.waitFor(() => expect(interaction.deleted).toBe(true));
  });
});

describe("discord auto-thread", () => {
  it("answers a channel mention in a new thread named after the question; the thread is its own chat", async () => {
    env = await startDiscordEnv({ adapter: { autoThread: true } });
    const question = env.fake.userSays({
      channelId: IDS.general,
      content: `<@${IDS.bot}> plan a trip to Lisbon`,
    });
    const msg = await env.nextMessage(1);
    expect(msg.chat).toEqual({ platform: "discord", chatId: IDS.general, threadId: question["id"] });
    // Nothing is opened before the bot answers.
    expect(env.fake.world.channels.has(question["id"])).toBe(false);

    await env.adapter.sendTyping(msg.chat);
    await env.adapter.send(msg.chat, {
      text: "Day 1: Alfama.",
      replyToId: msg.replyToId,
      idempotencyKey: "a1",
    });
    const thread = env.fake.world.channels.get(question["id"])!;
    expect(thread).toMatchObject({ type: 11, parent_id: IDS.general, name: "plan a trip to Lisbon" });
    expect(env.fake.posted[0]).toMatchObject({ channelId: question["id"], content: "Day 1: Alfama." });
    expect(env.fake.world.typing).toEqual([question["id"]]);

    // A follow-up in the thread arrives in the same chat, without needing a mention.
    env.fake.userSays({ channelId: question["id"], content: "and day 2?" });
    const followUp = await env.nextMessage(2);
    expect(followUp).toMatchObject({ chat: msg.chat, mentioned: false });
  });

  it("leaves plain channel chatter and DMs alone, and opens the thread after a restart too", async () => {
    const received: InboundMessage[] = [];
    env = await startDiscordEnv({ adapter: { autoThread: true } });
    env.fake.userSays({ channelId: IDS.general, content: "no mention here" });
    env.fake.userSays({ channelId: IDS.aliceDm, content: "a dm" });
    const q = env.fake.userSays({ channelId: IDS.general, content: `<@${IDS.bot}> question` });
    await env.nextMessage(3);
    const [plain, dm, mention] = ["no mention here", "a dm", "question"].map((t) =>
      env!.received.find((m) => m.text === t),
    );
    expect(plain?.chat.threadId).toBeUndefined();
    expect(dm?.chat.threadId).toBeUndefined();
    expect(mention?.chat.threadId).toBe(q["id"]);

    // The process restarts before answering: the new adapter still opens the thread from the message.
    await env.adapter.stop();
    const fresh = env.newAdapter({ autoThread: true });
    await fresh.start(recorder(received));
    await fresh.send(mention!.chat, { text: "answer after restart", idempotencyKey: "r1" });
    expect(env.fake.world.channels.get(q["id"])).toMatchObject({ type: 11, parent_id: IDS.general });
    expect(env.fake.posted.at(-1)).toMatchObject({ channelId: q["id"], content: "answer after restart" });
  });

  it("answers in the channel when the bot may not open threads", async () => {
    env = await startDiscordEnv({ adapter: { autoThread: true } });
    const q = env.fake.userSays({ channelId: IDS.general, content: `<@${IDS.bot}> question` });
    const msg = await env.nextMessage(1);
    env.fake.fail({ method: "POST", path: /\/threads$/, status: 403, code: 50013 });
    await env.adapter.send(msg.chat, {
      text: "here instead",
      replyToId: msg.replyToId,
      idempotencyKey: "f1",
    });
    expect(env.fake.posted[0]).toMatchObject({
      channelId: IDS.general,
      replyTo: q["id"],
      content: "here instead",
    });
  });
});
