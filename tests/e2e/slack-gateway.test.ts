/**
 * Slack through the whole gateway: the fake Slack, the real adapter configured by env as an operator
 * would, the gateway's HTTP server routing `/webhooks/slack`, the real runner, state, queue and agent,
 * and the scripted fake model.
 */
import { describe, expect, it, vi } from "vitest";
import {
  eventCallback,
  type FakeSlack,
  loadFixture,
  messageEvent,
  signedRequest,
  startFakeSlack,
} from "../fakes/slack/index.js";
import { chat, type Harness } from "../helpers/gateway-harness.js";
import { expectValidChunks, longReply } from "../helpers/long-reply.js";
import { platformPerTest } from "../helpers/per-test.js";
import { SIGNING_SECRET } from "./slack-helpers.js";

const running = platformPerTest<FakeSlack>();

async function start(env: Record<string, string> = {}) {
  const fake = running.trackFake(
    await startFakeSlack({ users: { U0ALICE01: { name: "alice", displayName: "Alice" } } }),
  );
  const h = await running.startHarness({
    env: {
      SLACK_BOT_TOKEN: fake.botToken,
      SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SLACK_API_URL: fake.apiUrl,
      SLACK_ALLOWED_USERS: "U0ALICE01,U0BOB0001",
      ...env,
    },
  });
  return { fake, h };
}

/** Slack posting an event to the gateway's public URL. */
async function deliver(h: Harness, body: Record<string, unknown>, options: { retryNum?: number } = {}) {
  const req = signedRequest(body, {
    secret: SIGNING_SECRET,
    url: `${h.apiUrl}/webhooks/slack/events`,
    ...options,
  });
  const res = await fetch(req);
  expect(res.status).toBe(200);
}

const said = (channel: string, ts: string, text: string, extra: { threadTs?: string; user?: string } = {}) =>
  eventCallback(messageEvent({ channel, ts, text, ...extra }));

/** Waits for `count` bot posts (in a thread, when given) and returns their texts. */
async function posts(f: FakeSlack, count: number, threadTs?: string): Promise<string[]> {
  const pick = () =>
    f.callsOf("chat.postMessage").filter((c) => threadTs === undefined || c.args["thread_ts"] === threadTs);
  await vi.waitFor(() => expect(pick().length).toBeGreaterThanOrEqual(count), { timeout: 10_000 });
  return pick().map((c) => String(c.args["text"]));
}

const userText = (h: Harness, i: number) =>
  JSON.stringify(h.llm.requests[i]?.messages.filter((m) => m.role === "user").map((m) => m.content));

describe("slack through the gateway", () => {
  it("answers a DM, with the working reaction shown and removed", async () => {
    const { fake, h } = await start();
    await deliver(h, loadFixture("message-im"));
    expect(await posts(fake, 1)).toEqual(["echo: What's the weather like in Lisbon &amp; Porto?"]);
    await h.gateway.runner.outbox.idle();
    expect(fake.callsOf("chat.postMessage")[0]!.args["channel"]).toBe("D0ALICE01");
    expect(fake.callsOf("reactions.add").map((c) => c.args["timestamp"])).toEqual(["1700000001.000100"]);
    await vi.waitFor(() => expect(fake.callsOf("reactions.remove")).toHaveLength(1));
    expect(h.gateway.adapters.get("slack")?.status?.().state).toBe("running");
  });

  it("ignores a channel message without a mention and answers a mention in its thread", async () => {
    const { fake, h } = await start();
    await deliver(h, said("C0GENERAL1", "1700000100.000001", "talking among ourselves"));
    await deliver(h, said("C0GENERAL1", "1700000200.000002", "<@UHERALD01> what's the time?"));
    expect(await posts(fake, 1)).toEqual(["echo: what's the time?"]);
    expect(fake.callsOf("chat.postMessage")[0]!.args["thread_ts"]).toBe("1700000200.000002");
    expect(h.llm.requests).toHaveLength(1);
    expect(userText(h, 0)).not.toContain("among ourselves");
  });

  it("answers the app_mention and message copies of one mention once", async () => {
    const { fake, h } = await start();
    const mention = loadFixture("app-mention");
    const event = mention["event"] as Record<string, string>;
    await deliver(h, mention);
    await deliver(h, said("C0GENERAL1", event["ts"]!, event["text"]!));
    expect(await posts(fake, 1)).toEqual(["echo: summarise this thread please"]);
    await h.gateway.runner.outbox.idle();
    expect(fake.callsOf("chat.postMessage")).toHaveLength(1);
    expect(h.llm.requests).toHaveLength(1);
  });

  it("keeps threads apart and answers in a thread without a mention once it replied there", async () => {
    const { fake, h } = await start();
    const a = "1700000300.000001";
    const b = "1700000400.000002";
    await deliver(h, said("C0GENERAL1", a, "<@UHERALD01> the secret is plum"));
    await posts(fake, 1, a);
    await deliver(h, said("C0GENERAL1", b, "<@UHERALD01> fresh topic"));
    await posts(fake, 1, b);
    await deliver(
      h,
      said("C0GENERAL1", "1700000500.000003", "what was the secret?", { threadTs: a, user: "U0BOB0001" }),
    );
    expect(await posts(fake, 2, a)).toEqual(["echo: the secret is plum", "echo: what was the secret?"]);

    expect(h.llm.requests).toHaveLength(3);
    expect(userText(h, 1)).not.toContain("plum");
    expect(userText(h, 2)).toContain("plum");
    expect(userText(h, 2)).not.toContain("fresh topic");
  });

  it("answers an event Slack retried once", async () => {
    const { fake, h } = await start();
    const body = loadFixture("message-im");
    await deliver(h, body);
    await deliver(h, body, { retryNum: 1 });
    await posts(fake, 1);
    await deliver(h, body, { retryNum: 2 });
    await h.gateway.runner.outbox.idle();
    expect(fake.callsOf("chat.postMessage")).toHaveLength(1);
    expect(h.llm.requests).toHaveLength(1);
  });

  it("delivers a long answer in valid messages of at most 4,000 characters, in the thread", async () => {
    const { fake, h } = await start();
    h.llm.script({ text: longReply({ lines: 150, padding: 30, proseRepeats: 120 }) });
    const ts = "1700000600.000001";
    await deliver(h, said("C0GENERAL1", ts, "<@UHERALD01> write a long one"));
    await vi.waitFor(() =>
      expect(fake.callsOf("chat.postMessage").some((c) => String(c.args["text"]).endsWith("a while."))).toBe(
        true,
      ),
    );
    await h.gateway.runner.outbox.idle();
    const chunks = await posts(fake, 1, ts);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    expectValidChunks(chunks, { maxChars: 4000, lines: 150 });
  });

  it("shows tool progress in one message and deletes it when the answer is out", async () => {
    const { fake, h } = await start();
    h.llm.script({ toolCalls: [{ name: "session_search", arguments: { query: "tea" } }] }, { text: "Done." });
    await deliver(h, loadFixture("message-im"));
    await vi.waitFor(() =>
      expect(fake.callsOf("chat.postMessage").some((c) => c.args["text"] === "Done.")).toBe(true),
    );
    await h.gateway.runner.outbox.idle();
    const progress = fake
      .callsOf("chat.postMessage")
      .find((c) => String(c.args["text"]).includes("session_search"));
    expect(progress).toBeDefined();
    await vi.waitFor(() => expect(fake.callsOf("chat.delete")).toHaveLength(1));
  });

  it("a gateway killed mid-turn answers exactly once after restart", async () => {
    const { fake, h } = await start();
    h.llm.script({ text: "first attempt", delayMs: 20_000 });
    await deliver(h, loadFixture("message-im"));
    await h.llm.waitForRequests(1);
    await h.crash();
    h.llm.script({ text: "the answer" });
    await h.start();
    expect(await posts(fake, 1)).toEqual(["the answer"]);
    await h.gateway.runner.outbox.idle();
    await h.restart();
    await h.gateway.runner.outbox.idle();
    expect(fake.callsOf("chat.postMessage").map((c) => c.args["text"])).toEqual(["the answer"]);
  });

  it("works over Socket Mode: event in, acknowledged, answered", async () => {
    const { fake } = await start({ SLACK_APP_TOKEN: "xapp-1-A0001-3333-fakeapptoken" });
    await fake.waitForConnections(1);
    await fake.pushEvent(loadFixture("message-im")).acked;
    expect(await posts(fake, 1)).toEqual(["echo: What's the weather like in Lisbon &amp; Porto?"]);
  });

  it("a revoked token fails the Slack adapter clearly while the rest of the gateway keeps running", async () => {
    const fake = running.trackFake(await startFakeSlack());
    fake.revokeBotToken();
    const harness = await running.startHarness({
      env: {
        SLACK_BOT_TOKEN: fake.botToken,
        SLACK_SIGNING_SECRET: SIGNING_SECRET,
        SLACK_API_URL: fake.apiUrl,
      },
    });
    expect(harness.gateway.failed.get("slack")).toContain("SLACK_BOT_TOKEN");
    expect((await chat(harness, "still there?")).text).toBe("echo: still there?");
  });
});
