/**
 * Mattermost through the whole gateway: the fake Mattermost server (REST + WebSocket), the real adapter
 * configured by env as an operator would, the real runner and the scripted model.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { createMattermostAdapter } from "../../adapters/mattermost/index.js";
import { createLogger } from "../../core/logger.js";
import type { InboundMessage } from "../../core/types.js";
import { memoryKv } from "../contracts/platform-drivers/memory-kv.js";
import { BOT_TOKEN, type FakeMattermost, mmId, startFakeMattermost } from "../fakes/mattermost/index.js";
import type { Harness } from "../helpers/gateway-harness.js";
import { platformPerTest } from "../helpers/per-test.js";

const ANN = mmId("ann");
const BOB = mmId("bob");
const STRANGER = mmId("stranger");
const DM = mmId("dm-ann-herald");
const DM_STRANGER = mmId("dm-stranger-herald");
const TEAM = mmId("town-square");

const running = platformPerTest<FakeMattermost>();

async function fakeServer(): Promise<FakeMattermost> {
  const fake = running.trackFake(await startFakeMattermost());
  fake.addUser(ANN, "ann");
  fake.addUser(BOB, "bob");
  fake.addUser(STRANGER, "stranger");
  fake.addChannel(DM, "D");
  fake.addChannel(DM_STRANGER, "D");
  fake.addChannel(TEAM, "O", "town-square");
  return fake;
}

async function start(env: Record<string, string> = {}): Promise<{ fake: FakeMattermost; h: Harness }> {
  const fake = running.fake ?? (await fakeServer());
  const h = await running.startHarness({
    env: {
      MATTERMOST_URL: fake.url,
      MATTERMOST_TOKEN: BOT_TOKEN,
      MATTERMOST_ALLOWED_USERS: `${ANN},${BOB}`,
      ...env,
    },
  });
  await vi.waitFor(() => expect(fake.openSockets).toBeGreaterThan(0));
  return { fake, h };
}

async function replies(fake: FakeMattermost, channel: string, count: number): Promise<string[]> {
  await vi.waitFor(() => expect(fake.botPostsIn(channel).length).toBeGreaterThanOrEqual(count), {
    timeout: 10_000,
  });
  return fake.botPostsIn(channel).map((p) => p.message);
}

const userTexts = (h: Harness) =>
  h.llm.requests.map((r) => String(r.messages.filter((m) => m.role === "user").at(-1)?.content ?? ""));

describe("mattermost through the gateway", () => {
  it("answers a DM once, with typing shown, and reports running in /health", async () => {
    const { fake, h } = await start();
    fake.userPost({ from: ANN, channel: DM, text: "Hello there" });
    expect(await replies(fake, DM, 1)).toEqual(["echo: Hello there"]);
    await h.gateway.runner.outbox.idle();
    expect(fake.botPostsIn(DM)).toHaveLength(1);
    // A DM reply is not threaded.
    expect(fake.botPostsIn(DM)[0]!.root_id).toBe("");
    expect(fake.calls.some((c) => c.path === "users/me/typing" && JSON.stringify(c.body).includes(DM))).toBe(
      true,
    );
    const health = (await (await fetch(`${h.apiUrl}/health`)).json()) as {
      adapters: Record<string, { state: string }>;
    };
    expect(health.adapters["mattermost"]?.state).toBe("running");
  });

  it("in a channel ignores chatter, answers a mention in its thread, and keeps the thread as one session", async () => {
    const { fake, h } = await start();
    const photo = fake.addFile(TEAM, "holiday.jpg", "image/jpeg", Buffer.from("not really a jpeg"));
    fake.userPost({ from: ANN, channel: TEAM, text: "talking among ourselves", fileIds: [photo] });
    const asked = fake.userPost({ from: ANN, channel: TEAM, text: "@herald what's the time?" });
    expect(await replies(fake, TEAM, 1)).toEqual(["echo: what's the time?"]);
    expect(fake.botPostsIn(TEAM)[0]!.root_id).toBe(asked);

    // A follow-up in the thread, without a mention: the thread is engaged, and it is the same session.
    h.llm.script((req) => ({
      text: `seen ${req.messages.filter((m) => m.role === "user").length} questions`,
    }));
    fake.userPost({ from: ANN, channel: TEAM, text: "and tomorrow?", rootId: asked });
    expect(await replies(fake, TEAM, 2)).toEqual(["echo: what's the time?", "seen 2 questions"]);
    expect(fake.botPostsIn(TEAM)[1]!.root_id).toBe(asked);

    // A new top-level mention starts its own thread and session.
    h.llm.script((req) => ({
      text: `seen ${req.messages.filter((m) => m.role === "user").length} questions`,
    }));
    const other = fake.userPost({ from: BOB, channel: TEAM, text: "@herald new topic" });
    expect(await replies(fake, TEAM, 3)).toContain("seen 1 questions");
    expect(fake.botPostsIn(TEAM)[2]!.root_id).toBe(other);
    await h.gateway.runner.outbox.idle();
    expect(JSON.stringify(userTexts(h))).not.toContain("among ourselves");
    expect(h.llm.requests).toHaveLength(3);
    // Chatter's files are not even downloaded.
    expect(fake.calls.some((c) => c.path === `files/${photo}`)).toBe(false);
  });

  it("answers channel messages without a mention when MATTERMOST_REQUIRE_MENTION=false", async () => {
    const { fake } = await start({ MATTERMOST_REQUIRE_MENTION: "false" });
    fake.userPost({ from: ANN, channel: TEAM, text: "anyone?" });
    expect(await replies(fake, TEAM, 1)).toEqual(["echo: anyone?"]);
  });

  it("gives an unknown user a pairing code and no model call", async () => {
    const { fake, h } = await start();
    fake.userPost({ from: STRANGER, channel: DM_STRANGER, text: "hi" });
    expect((await replies(fake, DM_STRANGER, 1))[0]).toMatch(/pairing code is \*\*[A-Z0-9]+\*\*/);
    expect(h.llm.requests).toHaveLength(0);
  });

  it("a file sent in reaches the model through the files API; a file sent out is uploaded and attached", async () => {
    const { fake, h } = await start();
    const fileId = fake.addFile(DM, "list.txt", "text/plain", Buffer.from("Shopping list: apples, pears"));
    fake.userPost({ from: ANN, channel: DM, text: "what is in this?", fileIds: [fileId] });
    await replies(fake, DM, 1);
    expect(userTexts(h)[0]).toContain("Shopping list: apples, pears");
    expect(fake.calls.some((c) => c.method === "GET" && c.path === `files/${fileId}`)).toBe(true);

    const path = join(h.homeDir, "report.txt");
    writeFileSync(path, "the report");
    const adapter = h.gateway.adapters.get("mattermost")!;
    await adapter.send(
      { platform: "mattermost", chatId: DM },
      { text: "Here it is", idempotencyKey: "file-out", files: [{ path, mimeType: "text/plain" }] },
    );
    const out = fake.botPostsIn(DM).at(-1)!;
    expect(out.message).toBe("Here it is");
    expect(out.file_ids).toHaveLength(1);
    const uploaded = fake.files.get(out.file_ids[0]!)!;
    expect(uploaded).toMatchObject({ name: "report.txt", mime_type: "text/plain", channel_id: DM });
    expect(uploaded.bytes.toString()).toBe(readFileSync(path, "utf8"));
  });

  it("a file over the media cap is not downloaded; the model is told", async () => {
    const { fake, h } = await start({ HERALD_MEDIA_MAX_BYTES: "16" });
    const fileId = fake.addFile(DM, "big.txt", "text/plain", Buffer.alloc(64, "x"));
    fake.userPost({ from: ANN, channel: DM, text: "read this", fileIds: [fileId] });
    await replies(fake, DM, 1);
    expect(userTexts(h)[0]).toContain("big.txt");
    expect(userTexts(h)[0]).toContain("over the size limit");
    expect(fake.calls.some((c) => c.method === "GET" && c.path === `files/${fileId}`)).toBe(false);
  });

  it("shows tool progress in a post of its own and deletes it when the answer is out", async () => {
    const { fake, h } = await start();
    h.llm.script({ toolCalls: [{ name: "session_search", arguments: { query: "tea" } }] }, { text: "Done." });
    fake.userPost({ from: ANN, channel: DM, text: "search for tea" });
    await vi.waitFor(() => expect(fake.botPostsIn(DM).map((p) => p.message)).toContain("Done."), {
      timeout: 10_000,
    });
    await h.gateway.runner.outbox.idle();
    const progress = fake.posts.find((p) => p.message.includes("session_search"));
    expect(progress).toBeDefined();
    await vi.waitFor(() => expect(fake.posts.find((p) => p.id === progress!.id)!.delete_at).not.toBe(0));
    expect(fake.botPostsIn(DM).map((p) => p.message)).toEqual(["Done."]);
  });

  it("a duplicate delivery is answered once; after a dropped socket it reconnects; a restart replays nothing", async () => {
    const { fake, h } = await start();
    fake.userPost({ from: ANN, channel: DM, text: "first" });
    await replies(fake, DM, 1);
    // The same post broadcast again (a server resending after a reconnect).
    fake.pushRaw({
      event: "posted",
      seq: 99,
      data: { channel_type: "D", post: JSON.stringify(fake.posts.find((p) => p.message === "first")) },
    });
    fake.dropSockets();
    await vi.waitFor(() => expect(fake.connections).toBeGreaterThanOrEqual(2), { timeout: 10_000 });
    await vi.waitFor(() => expect(fake.openSockets).toBe(1), { timeout: 10_000 });
    expect(h.gateway.adapters.get("mattermost")?.status?.().state).toBe("running");
    fake.userPost({ from: ANN, channel: DM, text: "second" });
    expect(await replies(fake, DM, 2)).toEqual(["echo: first", "echo: second"]);

    await h.restart();
    await vi.waitFor(() => expect(fake.openSockets).toBe(1), { timeout: 10_000 });
    fake.userPost({ from: ANN, channel: DM, text: "third" });
    expect(await replies(fake, DM, 3)).toEqual(["echo: first", "echo: second", "echo: third"]);
    await h.gateway.runner.outbox.idle();
    expect(fake.botPostsIn(DM)).toHaveLength(3);
    expect(h.llm.requests).toHaveLength(3);
  });

  it("posts written while the connection was down or Herald was stopped are answered once when it is back", async () => {
    const { fake, h } = await start();
    fake.userPost({ from: ANN, channel: DM, text: "first" });
    await replies(fake, DM, 1);
    await h.gateway.runner.outbox.idle();

    // A dropped connection: the post written meanwhile reaches no socket.
    fake.dropSockets();
    fake.userPost({ from: ANN, channel: DM, text: "while the line was down" });
    expect(await replies(fake, DM, 2)).toEqual(["echo: first", "echo: while the line was down"]);
    await h.gateway.runner.outbox.idle();

    // Herald stopped: the post waits on the server.
    await h.crash();
    await vi.waitFor(() => expect(fake.openSockets).toBe(0));
    fake.userPost({ from: ANN, channel: DM, text: "while you were away" });
    await h.start();
    expect(await replies(fake, DM, 3)).toEqual([
      "echo: first",
      "echo: while the line was down",
      "echo: while you were away",
    ]);
    await h.gateway.runner.outbox.idle();
    expect(fake.botPostsIn(DM)).toHaveLength(3);
    expect(h.llm.requests).toHaveLength(3);
    expect(fake.calls.some((c) => c.path === `channels/${DM}/posts`)).toBe(true);
  });

  it("a reply refused with 429 by the rate limiter is sent once after the wait it names", async () => {
    const { fake, h } = await start({ MATTERMOST_STREAM: "off" });
    fake.fault("POST posts", { status: 429, text: "limit exceeded\n", headers: { "Retry-After": "1" } });
    fake.userPost({ from: ANN, channel: DM, text: "busy?" });
    expect(await replies(fake, DM, 1)).toEqual(["echo: busy?"]);
    await h.gateway.runner.outbox.idle();
    expect(fake.botPostsIn(DM)).toHaveLength(1);
    // The refused attempt and the one that went through.
    expect(fake.calls.filter((c) => c.method === "POST" && c.path === "posts")).toHaveLength(2);
    expect(h.llm.requests).toHaveLength(1);
  });

  it("a revoked token fails the platform with the fix, and the gateway runs on", async () => {
    const fake = await fakeServer();
    const h = await running.startHarness({
      env: { MATTERMOST_URL: fake.url, MATTERMOST_TOKEN: "tok-revoked-4711" },
    });
    const health = (await (await fetch(`${h.apiUrl}/health`)).json()) as {
      adapters: Record<string, { state: string; detail?: string }>;
    };
    expect(health.adapters["mattermost"]?.state).toBe("failed");
    expect(health.adapters["mattermost"]?.detail).toMatch(/MATTERMOST_TOKEN.*new access token/);
    expect(health.adapters["mattermost"]?.detail).not.toContain("tok-revoked-4711");
  });
});

describe("mattermost adapter events", () => {
  it("a malformed event is logged and skipped; the next post is handled", async () => {
    const fake = await fakeServer();
    const lines: string[] = [];
    const logger = createLogger({
      level: "debug",
      destination: { write: (s: string) => void lines.push(s) },
    });
    const received: InboundMessage[] = [];
    const adapter = createMattermostAdapter(
      { url: fake.url, token: BOT_TOKEN },
      {
        logger,
        homeDir: tmpdir(),
        cacheDir: await mkdtemp(join(tmpdir(), "herald-mm-")),
        kv: memoryKv(),
      },
    );
    await adapter.start(async (m) => {
      received.push(m);
      return "accepted";
    });
    try {
      fake.pushRaw({ event: "posted", seq: 1, data: { channel_type: "D", post: "{not json" } });
      fake.pushRaw({
        event: "posted",
        seq: 2,
        data: { channel_type: "D", post: JSON.stringify({ id: "x" }) },
      });
      fake.pushRaw("just a string");
      fake.userPost({ from: ANN, channel: DM, text: "still here" });
      await vi.waitFor(() => expect(received.map((m) => m.text)).toEqual(["still here"]));
      const text = lines.join("");
      expect(text).toContain("mattermost event malformed; skipped");
      expect(text).toContain("data.post is not JSON");
      expect(text).not.toContain(BOT_TOKEN);
      expect(received[0]).toMatchObject({
        chatType: "dm",
        sender: { id: ANN, name: "ann" },
        mentioned: true,
      });
    } finally {
      await adapter.stop();
    }
  });

  it("a connection that stops answering pings is dropped and opened again", async () => {
    const fake = await fakeServer();
    const received: InboundMessage[] = [];
    const adapter = createMattermostAdapter(
      { url: fake.url, token: BOT_TOKEN, pingIntervalMs: 50, reconnectBaseMs: 20 },
      { logger: createLogger({ level: "silent" }), homeDir: tmpdir(), cacheDir: tmpdir(), kv: memoryKv() },
    );
    await adapter.start(async (m) => {
      received.push(m);
      return "accepted";
    });
    try {
      fake.freezeSockets();
      await vi.waitFor(() => expect(fake.connections).toBeGreaterThanOrEqual(2), { timeout: 10_000 });
      await vi.waitFor(() => expect(adapter.status().state).toBe("running"));
      fake.userPost({ from: ANN, channel: DM, text: "after the silence" });
      await vi.waitFor(() => expect(received.map((m) => m.text)).toContain("after the silence"));
    } finally {
      await adapter.stop();
    }
  });

  it("a token the WebSocket refuses fails start with the fix, and nothing reconnects", async () => {
    const fake = await fakeServer();
    fake.refuseSocketAuth = true;
    const adapter = createMattermostAdapter(
      { url: fake.url, token: BOT_TOKEN, reconnectBaseMs: 10 },
      { logger: createLogger({ level: "silent" }), homeDir: tmpdir(), cacheDir: tmpdir(), kv: memoryKv() },
    );
    await expect(adapter.start(async () => "accepted")).rejects.toThrow(
      /refused MATTERMOST_TOKEN on the WebSocket/,
    );
    expect(adapter.status().state).toBe("failed");
    await new Promise((r) => setTimeout(r, 200));
    expect(fake.connections).toBe(1);
    await adapter.stop();
  });
});
