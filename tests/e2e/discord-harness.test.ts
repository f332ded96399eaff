/**
 * Discord through the whole gateway: the fake Discord, the real adapter (configured by env like an
 * operator would), the real runner, state, queue and agent, and the scripted fake model.
 */
import { describe, expect, it, vi } from "vitest";
import { type FakeDiscord, IDS, startFakeDiscord } from "../fakes/discord/index.js";
import { chat, type Harness } from "../helpers/gateway-harness.js";
import { expectValidChunks, longReply } from "../helpers/long-reply.js";
import { platformPerTest } from "../helpers/per-test.js";

const running = platformPerTest<FakeDiscord>();

async function start(env: Record<string, string> = {}, token?: string) {
  const fake = running.trackFake(await startFakeDiscord());
  const h = await running.startHarness({
    env: {
      DISCORD_BOT_TOKEN: token ?? fake.token,
      DISCORD_API_URL: fake.url,
      DISCORD_ALLOWED_USERS: `${IDS.alice},${IDS.bob}`,
      ...env,
    },
  });
  if (!token) await fake.gateway.waitLive();
  return { fake, h };
}

/** Waits for `count` visible bot messages (optionally in one channel) and returns their contents. */
async function replies(f: FakeDiscord, count: number, channelId?: string): Promise<string[]> {
  await vi.waitFor(() => expect(f.botMessages(channelId).length).toBeGreaterThanOrEqual(count), {
    timeout: 10_000,
  });
  return f.botMessages(channelId).map((p) => p.currentContent);
}

const userText = (h: Harness, i: number) =>
  JSON.stringify(h.llm.requests[i]?.messages.filter((m) => m.role === "user").map((m) => m.content));

describe("discord through the gateway", () => {
  it("answers a DM with typing shown, once", async () => {
    const { fake, h } = await start();
    fake.userSays({ channelId: IDS.aliceDm, content: "hello there" });
    expect(await replies(fake, 1, IDS.aliceDm)).toEqual(["echo: hello there"]);
    expect(fake.world.typing).toContain(IDS.aliceDm);
    await h.gateway.runner.outbox.idle();
    expect(fake.posted).toHaveLength(1);
    expect(h.gateway.adapters.get("discord")?.status?.().state).toBe("running");
  });

  it("ignores a server message without a mention and answers a mention, quoting it", async () => {
    const { fake, h } = await start();
    fake.userSays({ channelId: IDS.general, content: "talking among ourselves" });
    const asked = fake.userSays({ channelId: IDS.general, content: `<@${IDS.bot}> what's the time?` });
    expect(await replies(fake, 1)).toEqual(["echo: what's the time?"]);
    expect(fake.posted[0]).toMatchObject({ channelId: IDS.general, replyTo: asked["id"] });
    expect(h.llm.requests).toHaveLength(1);
    expect(userText(h, 0)).not.toContain("among ourselves");
  });

  it("answers without a mention when DISCORD_REQUIRE_MENTION=false", async () => {
    const { fake } = await start({ DISCORD_REQUIRE_MENTION: "false" });
    fake.userSays({ channelId: IDS.general, content: "anyone?" });
    expect(await replies(fake, 1)).toEqual(["echo: anyone?"]);
  });

  it("keeps a thread's session apart and answers there without a mention once it replied", async () => {
    const { fake, h } = await start();
    fake.userSays({ channelId: IDS.general, content: `<@${IDS.bot}> the channel secret is plum` });
    await replies(fake, 1, IDS.general);
    const thread = fake.createThread(IDS.general, "side topic");
    const other = fake.createThread(IDS.general, "not for the bot");

    fake.userSays({ channelId: other["id"], content: "chatter before any mention" });
    fake.userSays({ channelId: thread["id"], content: `<@${IDS.bot}> start the thread` });
    expect(await replies(fake, 1, thread["id"])).toEqual(["echo: start the thread"]);
    fake.userSays({ channelId: thread["id"], content: "no mention needed now", authorId: IDS.bob });
    expect(await replies(fake, 2, thread["id"])).toEqual([
      "echo: start the thread",
      "echo: no mention needed now",
    ]);

    expect(fake.botMessages(other["id"])).toHaveLength(0);
    expect(h.llm.requests).toHaveLength(3);
    const threadTurn = userText(h, 2);
    expect(threadTurn).toContain("start the thread");
    expect(threadTurn).not.toContain("plum");
  });

  it("delivers a 6,000-character answer in valid chunks", async () => {
    const { fake, h } = await start();
    const text = longReply({ lines: 80, padding: 20, proseRepeats: 60 });
    expect(text.length).toBeGreaterThan(6000);
    h.llm.script({ text });
    fake.userSays({ channelId: IDS.aliceDm, content: "write a long one" });
    await vi.waitFor(() =>
      expect(fake.posted.reduce((n, p) => n + p.content.length, 0)).toBeGreaterThan(6000),
    );
    await h.gateway.runner.outbox.idle();
    const chunks = fake.posted.map((p) => p.content);
    expect(chunks.length).toBeGreaterThanOrEqual(4);
    expectValidChunks(chunks, { maxChars: 2000, lines: 80 });
  });

  it("does not let the model ping @everyone", async () => {
    const { fake, h } = await start();
    h.llm.script({ text: "@everyone and @here: meeting at 5 <@&1300000000000000003>" });
    fake.userSays({ channelId: IDS.general, content: `<@${IDS.bot}> announce the meeting` });
    await replies(fake, 1);
    expect(fake.posted[0]!.content).toContain("@everyone");
    expect(fake.posted[0]!.pings).toEqual({ everyone: false, roles: [], users: [IDS.alice] });
  });

  it("resumes after a gateway disconnect mid-conversation: nothing lost, nothing answered twice", async () => {
    const { fake, h } = await start();
    fake.userSays({ channelId: IDS.aliceDm, content: "one" });
    await replies(fake, 1);
    fake.gateway.drop();
    fake.userSays({ channelId: IDS.aliceDm, content: "two" });
    fake.gateway.replayOnResume = 5; // Discord also replays events the client already had
    await fake.gateway.waitLive();
    expect(await replies(fake, 2)).toEqual(["echo: one", "echo: two"]);
    await h.gateway.runner.outbox.idle();
    expect(fake.gateway.received(6)).toHaveLength(1);
    expect(fake.posted).toHaveLength(2);
    expect(h.llm.requests).toHaveLength(2);
  });

  it("processes a message Discord delivers again after a restart once", async () => {
    const { fake, h } = await start();
    const message = fake.userSays({ channelId: IDS.aliceDm, content: "only once" });
    await replies(fake, 1);
    await h.restart();
    await vi.waitFor(() => expect(fake.gateway.received(2)).toHaveLength(2));
    await fake.gateway.waitLive();
    fake.gateway.dispatch("MESSAGE_CREATE", message);
    fake.userSays({ channelId: IDS.aliceDm, content: "after restart" });
    expect(await replies(fake, 2)).toEqual(["echo: only once", "echo: after restart"]);
    expect(h.llm.requests).toHaveLength(2);
  });

  it("a gateway killed mid-turn answers exactly once after restart", async () => {
    const { fake, h } = await start();
    h.llm.script({ text: "first attempt", delayMs: 20_000 });
    fake.userSays({ channelId: IDS.aliceDm, content: "important question" });
    await h.llm.waitForRequests(1);
    await h.crash();
    h.llm.script({ text: "the answer" });
    await h.start();
    expect(await replies(fake, 1)).toEqual(["the answer"]);
    await h.gateway.runner.outbox.idle();
    await h.restart();
    await h.gateway.runner.outbox.idle();
    expect(fake.posted.map((p) => p.content)).toEqual(["the answer"]);
  });

  it("a message sent while the gateway was down is answered after it starts again", async () => {
    const { fake, h } = await start();
    fake.userSays({ channelId: IDS.aliceDm, content: "first" });
    await replies(fake, 1);
    await h.gateway.runner.outbox.idle();
    await h.crash();
    fake.userSays({ channelId: IDS.aliceDm, content: "are you back?" });
    await h.start();
    expect(await replies(fake, 2)).toEqual(["echo: first", "echo: are you back?"]);
    await h.gateway.runner.outbox.idle();
    expect(h.llm.requests).toHaveLength(2);
  });

  it("a reply whose confirmation was lost is retried by the outbox and posted once", async () => {
    const { fake, h } = await start();
    fake.fail({ method: "POST", path: /\/messages$/, status: 500, commit: true, times: 4 });
    fake.userSays({ channelId: IDS.aliceDm, content: "hello" });
    await vi.waitFor(
      () => expect(fake.requests.filter((r) => r.method === "POST").length).toBeGreaterThan(4),
      {
        timeout: 10_000,
      },
    );
    await h.gateway.runner.outbox.idle();
    expect(fake.posted.map((p) => p.content)).toEqual(["echo: hello"]);
  });

  it("shows tool progress in one message and removes it when the answer is out", async () => {
    const { fake, h } = await start();
    h.llm.script({ toolCalls: [{ name: "session_search", arguments: { query: "tea" } }] }, { text: "Done." });
    fake.userSays({ channelId: IDS.aliceDm, content: "search for tea" });
    await vi.waitFor(() => expect(fake.posted.some((p) => p.content === "Done.")).toBe(true));
    await h.gateway.runner.outbox.idle();
    const progress = fake.posted.find((p) => p.content.includes("session_search"));
    expect(progress).toBeDefined();
    await vi.waitFor(() => expect(progress!.deleted).toBe(true));
    expect(fake.botMessages().map((p) => p.content)).toEqual(["Done."]);
  });

  it("answers /new typed as text and as a native slash command", async () => {
    const { fake, h } = await start();
    fake.userSays({ channelId: IDS.aliceDm, content: "/new" });
    expect((await replies(fake, 1))[0]).toMatch(/New session/);
    fake.userSays({ channelId: IDS.general, content: "/stop" }); // no mention needed for Herald's commands
    expect(await replies(fake, 1, IDS.general)).toEqual(["Nothing is running."]);
    const interaction = fake.runCommand(IDS.aliceDm, "status");
    await vi.waitFor(() => expect(interaction.reply).toMatch(/Session:/));
    // The registry's menu, registered natively.
    const menu = h.gateway.runner.commands.menu().map((c) => c.name);
    expect(fake.world.commands.map((c) => c["name"])).toEqual(menu);
    expect(menu).toEqual(expect.arrayContaining(["new", "stop", "status", "help", "retry", "sessions"]));
  });

  it("opens a thread for a channel mention with DISCORD_AUTO_THREAD and continues there", async () => {
    const { fake } = await start({ DISCORD_AUTO_THREAD: "true" });
    const q = fake.userSays({ channelId: IDS.general, content: `<@${IDS.bot}> plan my week` });
    expect(await replies(fake, 1, q["id"])).toEqual(["echo: plan my week"]);
    expect(fake.world.channels.get(q["id"])).toMatchObject({ type: 11, name: "plan my week" });
    fake.userSays({ channelId: q["id"], content: "and the weekend?" });
    expect(await replies(fake, 2, q["id"])).toEqual(["echo: plan my week", "echo: and the weekend?"]);
    expect(fake.botMessages(IDS.general)).toHaveLength(0);
  });

  it("an invalid token fails only the Discord adapter, with the fix; the rest keeps running", async () => {
    const { h } = await start({}, "revoked-token");
    expect(h.gateway.failed.get("discord")).toMatch(/DISCORD_BOT_TOKEN.*developer portal/s);
    const answer = await chat(h, "still there?");
    expect(answer).toMatchObject({ status: 200, text: "echo: still there?" });
  });
});
