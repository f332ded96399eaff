/**
 * The GatewayRunner end to end: a chat adapter at the PlatformAdapter boundary, the real runner, queue,
 * SQLite state, agent loop and the scripted fake model over HTTP.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { FakeChatAdapter } from "../fakes/chat/index.js";
import { type Harness, type HarnessOptions, startHarness } from "../helpers/gateway-harness.js";

let harness: Harness | undefined;
let chat: FakeChatAdapter;

afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

async function start(env: Record<string, string> = {}, extra: Partial<HarnessOptions> = {}) {
  harness = await startHarness({
    env: { GATEWAY_ALLOWED_USERS: "fakechat:alice", ...env },
    adapters: () => {
      chat = new FakeChatAdapter();
      return [chat];
    },
    ...extra,
  });
  return harness;
}

describe("GatewayRunner", () => {
  it("answers a DM and shows typing and tool progress while it works", async () => {
    const h = await start();
    h.llm.script({ toolCalls: [{ name: "session_search", arguments: { query: "tea" } }] }, { text: "Done." });
    await chat.inject({ text: "search for tea" });
    expect(await chat.waitForTexts(1)).toEqual(["Done."]);
    expect(chat.typing).toBeGreaterThan(0);
    const progress = chat.sent.filter((s) => s.message.idempotencyKey.startsWith("progress-"));
    expect(progress[0]?.message.text).toContain("session_search");
  });

  it("processes a redelivered message once", async () => {
    const h = await start();
    expect(await chat.inject({ messageId: "same", text: "hello" })).toBe("accepted");
    expect(await chat.inject({ messageId: "same", text: "hello" })).toBe("duplicate");
    await chat.waitForTexts(1);
    expect(h.llm.requests).toHaveLength(1);
  });

  it("gives an unknown DM user a pairing code and no model call; after approval they get answers", async () => {
    const h = await start();
    expect(
      await chat.inject({
        sender: { id: "mallory" },
        chat: { platform: "fakechat", chatId: "dm-m" },
        text: "hi",
      }),
    ).toBe("pairing");
    const [notice] = await chat.waitForTexts(1);
    const code = /\*\*([A-Z0-9]{8})\*\*/.exec(notice!)?.[1];
    expect(code).toMatch(/^[ABCDEFGHJKMNPQRSTUVWXYZ23456789]{8}$/);
    expect(h.llm.requests).toHaveLength(0);
    // A second message within the rate limit gets no second code and still no model call.
    await chat.inject({
      sender: { id: "mallory" },
      chat: { platform: "fakechat", chatId: "dm-m" },
      text: "hello?",
    });
    expect(h.llm.requests).toHaveLength(0);

    expect(h.state.pairing.approve(code!.toLowerCase())).toEqual({ platform: "fakechat", userId: "mallory" });
    await chat.inject({
      sender: { id: "mallory" },
      chat: { platform: "fakechat", chatId: "dm-m" },
      text: "now?",
    });
    const texts = await chat.waitForTexts(2);
    expect(texts[1]).toBe("echo: now?");
  });

  it("ignores unknown users in groups silently and unaddressed group chatter", async () => {
    const h = await start();
    const group = { platform: "fakechat", chatId: "group-1" };
    expect(
      await chat.inject({ chat: group, chatType: "group", sender: { id: "stranger" }, text: "@bot hi" }),
    ).toBe("unauthorized");
    expect(
      await chat.inject({ chat: group, chatType: "group", mentioned: false, text: "just chatting" }),
    ).toBe("ignored");
    expect(await chat.inject({ chat: group, chatType: "group", mentioned: true, text: "@bot hi" })).toBe(
      "accepted",
    );
    expect(await chat.waitForTexts(1)).toEqual(["echo: @bot hi"]);
    expect(h.llm.requests).toHaveLength(1);
  });

  it("answers without a mention in a thread it already answered in", async () => {
    await start();
    const thread = { platform: "fakechat", chatId: "group-1", threadId: "t1" };
    expect(await chat.inject({ chat: thread, chatType: "group", mentioned: false, text: "anyone?" })).toBe(
      "ignored",
    );
    await chat.inject({ chat: thread, chatType: "group", mentioned: true, text: "bot, hi" });
    await chat.waitForTexts(1);
    expect(await chat.inject({ chat: thread, chatType: "group", mentioned: false, text: "follow-up" })).toBe(
      "accepted",
    );
    expect((await chat.waitForTexts(2))[1]).toBe("echo: follow-up");
  });

  it("/stop cancels a slow turn and its reply never arrives", async () => {
    const h = await start();
    h.llm.script({ text: "STALE reply", delayMs: 20_000 });
    await chat.inject({ text: "take your time" });
    await h.llm.waitForRequests(1);
    await chat.inject({ text: "/stop" });
    await h.llm.waitForClosedEarly(1);
    await chat.inject({ text: "ping" });
    const texts = await chat.waitForTexts(2);
    expect(texts).toEqual(["⏹ Stopped.", "echo: ping"]);
    await h.gateway.runner.outbox.idle();
    expect(chat.texts().join()).not.toContain("STALE");
  });

  it("interrupt: a new message cancels the running turn and becomes the next turn, which sees both", async () => {
    const h = await start();
    h.llm.script({ text: "STALE", delayMs: 20_000 });
    await chat.inject({ text: "write a sort function" });
    await h.llm.waitForRequests(1);
    await chat.inject({ text: "in Python please" });
    await h.llm.waitForClosedEarly(1);
    const texts = await chat.waitForTexts(1);
    expect(texts).toEqual(["echo: in Python please"]);
    const users = h.llm.requests[1]!.messages.filter((m) => m.role === "user").map((m) => m.content);
    expect(users).toEqual(["write a sort function", "in Python please"]);
  });

  it("queue mode runs every message as its own turn, in order", async () => {
    const h = await start({ HERALD_BUSY_POLICY: "queue" });
    h.llm.setDefault((req) => ({ text: `re: ${req.messages.at(-1)?.content}`, delayMs: 30 }));
    for (const n of [1, 2, 3]) await chat.inject({ text: `message ${n}` });
    expect(await chat.waitForTexts(3)).toEqual(["re: message 1", "re: message 2", "re: message 3"]);
    // Each turn saw the previous one's answer.
    expect(h.llm.requests[2]!.messages.map((m) => m.content)).toContain("re: message 2");
  });

  it("after an idle reset the user gets one short notice and a clean session", async () => {
    const h = await start();
    await chat.inject({ text: "the password is swordfish" });
    await chat.waitForTexts(1);
    // A day and a half passes. (This test writes to the file from the gateway's own thread: the
    // gateway's open batch, which would commit on the next loop turn, is committed first.)
    h.gateway.state.flush();
    const db = new Database(join(h.homeDir, "state.db"));
    db.prepare("UPDATE sessions SET last_active_at = last_active_at - ?").run(36 * 3600_000);
    db.close();
    await chat.inject({ text: "what is the password?" });
    const texts = await chat.waitForTexts(3);
    expect(texts[1]).toMatch(/fresh session/i);
    expect(texts[2]).toBe("echo: what is the password?");
    expect(JSON.stringify(h.llm.requests[1]!.messages)).not.toContain("swordfish");
    await chat.inject({ text: "again" });
    const after = await chat.waitForTexts(4);
    expect(after.filter((t) => /fresh session/i.test(t))).toHaveLength(1);
  });

  it("a gateway killed mid-turn answers exactly once after restart", async () => {
    const h = await start();
    h.llm.script({ text: "first attempt", delayMs: 20_000 });
    await chat.inject({ text: "important question" });
    await h.llm.waitForRequests(1);
    await h.crash();
    expect(chat.texts()).toEqual([]);
    h.llm.script({ text: "the answer" });
    await h.start();
    expect(await chat.waitForTexts(1)).toEqual(["the answer"]);
    await h.gateway.runner.outbox.idle();
    // A second restart delivers nothing more.
    await h.restart();
    await h.gateway.runner.outbox.idle();
    expect(chat.texts()).toEqual([]);
    expect(h.llm.requests).toHaveLength(2);
  });

  it("a reply the platform refused is retried until delivered, once", async () => {
    const h = await start();
    chat.failNext = { count: 2, error: new Error("network down") };
    await chat.inject({ text: "hello" });
    expect(await chat.waitForTexts(1, 15_000)).toEqual(["echo: hello"]);
    await h.gateway.runner.outbox.idle();
    expect(chat.texts()).toHaveLength(1);
  });
});
