/**
 * The Slack adapter over the HTTP Events API: signed requests from "Slack" reach the real adapter
 * (bolt inside) through `handleWebhook`, and its Web API calls reach the fake Slack.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sessionKey } from "../../core/chat.js";
import {
  eventCallback,
  type FakeSlack,
  loadFixture,
  messageEvent,
  signedRequest,
  startFakeSlack,
} from "../fakes/slack/index.js";
import { captureLogger, type RunningAdapter, SIGNING_SECRET, startSlackAdapter } from "./slack-helpers.js";

let fake: FakeSlack;
let running: RunningAdapter;

const post = (body: Record<string, unknown>, options: { retryNum?: number } = {}) =>
  running.adapter.handleWebhook(signedRequest(body, { secret: SIGNING_SECRET, ...options }));

beforeEach(async () => {
  fake = await startFakeSlack({ users: { U0ALICE01: { name: "alice", displayName: "Alice" } } });
  running = await startSlackAdapter(fake);
});

afterEach(async () => {
  await running.stop();
  await fake.close();
});

describe("request verification", () => {
  it("answers Slack's URL verification challenge", async () => {
    const fixture = loadFixture("url-verification");
    const res = await post(fixture);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ challenge: fixture["challenge"] });
  });

  it("refuses a bad signature, a stale timestamp and a missing signature; the gateway hears nothing", async () => {
    const body = loadFixture("message-im");
    const wrongSecret = await running.adapter.handleWebhook(
      signedRequest(body, { secret: "not-the-secret" }),
    );
    const stale = await running.adapter.handleWebhook(
      signedRequest(body, { secret: SIGNING_SECRET, timestampSec: Math.floor(Date.now() / 1000) - 6 * 60 }),
    );
    const unsigned = await running.adapter.handleWebhook(
      new Request("http://127.0.0.1/webhooks/slack", { method: "POST", body: JSON.stringify(body) }),
    );
    expect([wrongSecret.status, stale.status, unsigned.status]).toEqual([401, 401, 401]);
    expect(running.gateway.calls).toHaveLength(0);
    // The same body, signed correctly and fresh, goes through: verification was the only difference.
    expect((await post(body)).status).toBe(200);
    expect(running.gateway.calls).toHaveLength(1);
  });
});

describe("chats", () => {
  it("a DM reaches the gateway and the reply goes back to the DM", async () => {
    const res = await post(loadFixture("message-im"));
    expect(res.status).toBe(200);
    const [msg] = running.gateway.calls;
    expect(msg).toMatchObject({
      platform: "slack",
      messageId: "D0ALICE01:1700000001.000100",
      chat: { platform: "slack", chatId: "D0ALICE01" },
      chatType: "dm",
      mentioned: true,
      sender: { id: "U0ALICE01", name: "Alice" },
      text: "What's the weather like in Lisbon & Porto?",
      replyToId: "1700000001.000100",
    });
    expect(msg!.chat.threadId).toBeUndefined();

    await running.adapter.send(msg!.chat, {
      text: "It's **sunny** & warm",
      replyToId: msg!.replyToId,
      idempotencyKey: "r1",
    });
    const [sent] = fake.callsOf("chat.postMessage");
    expect(sent!.args).toMatchObject({ channel: "D0ALICE01", text: "It's *sunny* &amp; warm" });
    expect(sent!.args["thread_ts"]).toBeUndefined();
    expect(sent!.token).toBe(fake.botToken);
  });

  it("a channel message without a mention reaches the gateway unmentioned, in its own thread", async () => {
    await post(loadFixture("message-channel"));
    const [msg] = running.gateway.calls;
    expect(msg).toMatchObject({
      chat: { platform: "slack", chatId: "C0GENERAL1", threadId: "1700000002.000200" },
      chatType: "group",
      mentioned: false,
      text: "Has anyone seen the release notes?",
    });
    expect(fake.callsOf("chat.postMessage")).toHaveLength(0);
  });

  it("a mention is one message (app_mention and message copies), stripped of the mention, answered in its thread", async () => {
    const mention = loadFixture("app-mention");
    const event = mention["event"] as Record<string, string>;
    const copy = eventCallback(
      messageEvent({ channel: event["channel"]!, ts: event["ts"]!, text: event["text"]! }),
    );
    await post(mention);
    await post(copy);
    expect(running.gateway.calls).toHaveLength(2);
    const [a, b] = running.gateway.calls;
    expect(a!.messageId).toBe(b!.messageId);
    expect(running.gateway.outcomes).toEqual(["accepted", "duplicate"]);
    expect(a).toMatchObject({
      chat: { chatId: "C0GENERAL1", threadId: "1700000003.000300" },
      mentioned: true,
      text: "summarise this thread please",
    });
    expect(b!.mentioned).toBe(true);

    await running.adapter.send(a!.chat, {
      text: "Here is the summary.",
      replyToId: a!.replyToId,
      idempotencyKey: "r1",
    });
    expect(fake.callsOf("chat.postMessage")[0]!.args).toMatchObject({
      channel: "C0GENERAL1",
      thread_ts: "1700000003.000300",
      text: "Here is the summary.",
    });
  });

  it("each thread is its own session; a follow-up in a thread lands in that thread's session", async () => {
    const first = messageEvent({
      channel: "C0GENERAL1",
      ts: "1700000100.000001",
      text: "<@UHERALD01> first question",
    });
    const second = messageEvent({
      channel: "C0GENERAL1",
      ts: "1700000200.000002",
      text: "<@UHERALD01> second question",
    });
    const followUp = messageEvent({
      channel: "C0GENERAL1",
      ts: "1700000300.000003",
      threadTs: "1700000100.000001",
      text: "and more",
    });
    for (const e of [first, second, followUp]) expect((await post(eventCallback(e))).status).toBe(200);

    const [m1, m2, m3] = running.gateway.calls;
    const key = (m: typeof m1) => sessionKey({ chat: m!.chat, chatType: m!.chatType, userId: m!.sender.id });
    expect(key(m1)).not.toBe(key(m2));
    expect(key(m3)).toBe(key(m1));
    expect(m3!.mentioned).toBe(false);

    for (const m of [m1, m2, m3]) {
      await running.adapter.send(m!.chat, {
        text: `re ${m!.text}`,
        replyToId: m!.replyToId,
        idempotencyKey: m!.messageId,
      });
    }
    expect(fake.callsOf("chat.postMessage").map((c) => c.args["thread_ts"])).toEqual([
      "1700000100.000001",
      "1700000200.000002",
      "1700000100.000001",
    ]);
  });

  it("ignores bot messages, its own messages, edits and deletes", async () => {
    const own = messageEvent({
      channel: "C0GENERAL1",
      ts: "1700000400.000001",
      text: "my own reply",
      user: fake.botUserId,
    });
    const ownBot = messageEvent({
      channel: "C0GENERAL1",
      ts: "1700000400.000002",
      text: "x",
      subtype: "bot_message",
      botId: fake.botId,
    });
    for (const body of [
      loadFixture("bot-message"),
      loadFixture("message-changed"),
      loadFixture("message-deleted"),
      eventCallback(own),
      eventCallback(ownBot),
    ]) {
      expect((await post(body)).status).toBe(200);
    }
    expect(running.gateway.calls).toHaveLength(0);
    await post(loadFixture("message-im"));
    expect(running.gateway.calls).toHaveLength(1);
  });

  it("a malformed event is acknowledged and skipped without stopping the adapter", async () => {
    const broken = eventCallback({
      type: "message",
      channel: "C0GENERAL1",
      user: "U0ALICE01",
      text: "hi",
      ts: "not-a-ts",
    });
    expect((await post(broken)).status).toBe(200);
    expect(running.gateway.calls).toHaveLength(0);
    expect((await post(loadFixture("message-im"))).status).toBe(200);
    expect(running.gateway.calls).toHaveLength(1);
  });
});

describe("no loss, no duplicates", () => {
  it("acknowledges only after the gateway recorded the message; a failed recording gets 500 so Slack retries", async () => {
    const held = running.gateway.hold();
    let answered = false;
    const pending = post(loadFixture("message-im")).then((r) => {
      answered = true;
      return r;
    });
    await held.entered;
    expect(answered).toBe(false);
    held.release();
    expect((await pending).status).toBe(200);

    running.gateway.failNext();
    const body = loadFixture("message-channel");
    expect((await post(body)).status).toBe(500);
    expect((await post(body, { retryNum: 1 })).status).toBe(200);
    expect(running.gateway.outcomes).toEqual(["accepted", "accepted"]);
  });

  it("a slow recording is acknowledged at the deadline, and the message still arrives", async () => {
    await running.stop();
    running = await startSlackAdapter(fake, { ackDeadlineMs: 100 });
    const held = running.gateway.hold();
    const res = await post(loadFixture("message-im"));
    expect(res.status).toBe(200);
    await held.entered;
    expect(running.gateway.outcomes).toEqual([]);
    held.release();
    await expect.poll(() => running.gateway.outcomes).toEqual(["accepted"]);
  });

  it("a retried event is processed once, also when the retry arrives while the first is still recorded", async () => {
    await running.stop();
    const log = captureLogger();
    running = await startSlackAdapter(fake, {}, log.logger);
    const body = loadFixture("message-im");
    const held = running.gateway.hold();
    const first = post(body);
    await held.entered;
    const concurrentRetry = post(body, { retryNum: 1 });
    await expect.poll(() => log.text()).toContain("joins the delivery of the same message in progress");
    held.release();
    expect((await first).status).toBe(200);
    expect((await concurrentRetry).status).toBe(200);
    expect((await post(body, { retryNum: 2 })).status).toBe(200);

    // The concurrent retry joined the first delivery; the later one reached the ledger as a duplicate.
    expect(running.gateway.outcomes).toEqual(["accepted", "duplicate"]);
    expect(running.gateway.accepted()).toHaveLength(1);
  });
});

describe("logs", () => {
  it("never contain the bot token or the signing secret, even at trace level", async () => {
    await running.stop();
    const log = captureLogger();
    running = await startSlackAdapter(fake, {}, log.logger);
    await post(loadFixture("message-im"));
    await running.adapter.handleWebhook(signedRequest(loadFixture("message-im"), { secret: "wrong" }));
    const msg = running.gateway.calls[0]!;
    await running.adapter.send(msg.chat, { text: "hi", idempotencyKey: "x" });
    fake.inject("chat.postMessage", { kind: "error", error: "missing_scope", needed: "chat:write" });
    await running.adapter.send(msg.chat, { text: "hi", idempotencyKey: "y" }).catch(() => {});

    const text = log.text();
    expect(text).toContain("slack adapter started");
    expect(text).toContain("signature or timestamp invalid");
    expect(text).not.toContain(fake.botToken);
    expect(text).not.toContain(SIGNING_SECRET);
  });
});
