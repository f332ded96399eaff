/**
 * What users see of Herald's replies in Slack: mrkdwn rendering, long replies split into valid
 * messages, the working reaction and the tool-progress message, and how rate limits and Slack errors
 * come back to the outbox.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openFenceAtEnd } from "../../adapters/shared/split.js";
import { PlatformError } from "../../core/errors.js";
import { type FakeSlack, loadFixture, signedRequest, startFakeSlack } from "../fakes/slack/index.js";
import { type RunningAdapter, SIGNING_SECRET, startSlackAdapter } from "./slack-helpers.js";

let fake: FakeSlack;
let running: RunningAdapter;
const thread = { platform: "slack", chatId: "C0GENERAL1", threadId: "1700000002.000200" };

beforeEach(async () => {
  fake = await startFakeSlack();
  running = await startSlackAdapter(fake, { workingIdleMs: 150 });
});

afterEach(async () => {
  await running.stop();
  await fake.close();
});

describe("formatting", () => {
  it("renders every Markdown construct as Slack mrkdwn", async () => {
    const markdown = [
      "## Results for A&B",
      "",
      "This is **bold**, *italic*, ~~gone~~, `x < y` and a [link](https://example.com/?a=1&b=2).",
      "",
      "- first",
      "- second",
      "  - nested",
      "",
      "1. one",
      "2. two",
      "",
      "> quoted **text**",
      "",
      "```python",
      "if a < b and b > c:",
      "    print('&')",
      "```",
      "",
      "| name | qty |",
      "| --- | --- |",
      "| apple | 3 |",
      "",
      "Plain <tag> & done.",
    ].join("\n");
    await running.adapter.send(thread, { text: markdown, idempotencyKey: "fmt" });

    const [call] = fake.callsOf("chat.postMessage");
    expect(call!.args["text"]).toBe(
      [
        "*Results for A&amp;B*",
        "",
        "This is *bold*, _italic_, ~gone~, `x &lt; y` and a <https://example.com/?a=1&amp;b=2|link>.",
        "",
        "• first",
        "• second",
        "  ◦ nested",
        "",
        "1. one",
        "2. two",
        "",
        "> quoted *text*",
        "",
        "```",
        "if a &lt; b and b &gt; c:",
        "    print('&amp;')",
        "```",
        "",
        "```",
        "name  | qty",
        "------+----",
        "apple | 3",
        "```",
        "",
        "Plain &lt;tag&gt; &amp; done.",
      ].join("\n"),
    );
  });

  it("splits a long reply into messages of at most 4,000 characters, code blocks kept valid, all in the thread", async () => {
    const prose = Array.from(
      { length: 40 },
      (_, i) => `Paragraph ${i}: ${"lorem ipsum dolor sit amet ".repeat(8)}`,
    ).join("\n\n");
    const code = Array.from({ length: 250 }, (_, i) => `console.log(${i} < limit && ok);`).join("\n");
    const text = `${prose}\n\n\`\`\`js\n${code}\n\`\`\`\n\nThe end.`;
    const result = await running.adapter.send(thread, { text, idempotencyKey: "long" });

    const posted = fake.callsOf("chat.postMessage").map((c) => String(c.args["text"]));
    expect(posted.length).toBeGreaterThan(3);
    expect(result.messageIds).toHaveLength(posted.length);
    for (const chunk of posted) {
      expect(chunk.length).toBeLessThanOrEqual(4000);
      expect(openFenceAtEnd(chunk)).toBeUndefined();
    }
    expect(fake.callsOf("chat.postMessage").every((c) => c.args["thread_ts"] === thread.threadId)).toBe(true);
    const lines = posted.join("\n").split("\n");
    expect(lines.filter((l) => l.startsWith("console.log("))).toEqual(
      code.replace(/</g, "&lt;").replace(/&&/g, "&amp;&amp;").split("\n"),
    );
    expect(posted.join("\n")).toContain("Paragraph 39:");
    expect(posted.at(-1)).toContain("The end.");

    // A retry that resumes at chunk 2 sends exactly the remaining chunks, identical to the first run.
    const again = await running.adapter.send(thread, { text, idempotencyKey: "long" }, { fromChunk: 2 });
    const resent = fake
      .callsOf("chat.postMessage")
      .slice(posted.length)
      .map((c) => String(c.args["text"]));
    expect(resent).toEqual(posted.slice(2));
    expect(again.messageIds).toHaveLength(posted.length - 2);
  });
});

describe("feedback", () => {
  async function acceptedDm() {
    await running.adapter.handleWebhook(signedRequest(loadFixture("message-im"), { secret: SIGNING_SECRET }));
    return running.gateway.calls[0]!;
  }

  it("reacts once to the user's message while working, and removes the reaction with the reply", async () => {
    const msg = await acceptedDm();
    for (let i = 0; i < 3; i++) await running.adapter.sendTyping(msg.chat);
    expect(fake.callsOf("reactions.add").map((c) => c.args)).toEqual([
      { channel: "D0ALICE01", timestamp: "1700000001.000100", name: "eyes" },
    ]);

    await running.adapter.send(msg.chat, { text: "Done.", replyToId: msg.replyToId, idempotencyKey: "r" });
    expect(fake.callsOf("reactions.remove").map((c) => c.args)).toEqual([
      { channel: "D0ALICE01", timestamp: "1700000001.000100", name: "eyes" },
    ]);
  });

  it("removes the reaction when a turn ends without a reply (typing stopped)", async () => {
    const msg = await acceptedDm();
    await running.adapter.sendTyping(msg.chat);
    await fake.waitForCall("reactions.remove");
    expect(fake.callsOf("reactions.remove")[0]!.args).toMatchObject({ timestamp: msg.replyToId });
  });

  it("shows tool progress in one message edited in place, then deleted", async () => {
    const sent = await running.adapter.send(thread, {
      text: "🔧 `web_search`: weather Lisbon",
      kind: "notice",
      idempotencyKey: "p",
    });
    const id = sent.messageIds[0]!;
    await running.adapter.edit(thread, id, "🔧 `web_search`: weather Lisbon\n🔧 `fetch_url`: ipma.pt");
    await running.adapter.deleteMessage(thread, id);

    expect(fake.callsOf("chat.postMessage")[0]!.args).toMatchObject({ thread_ts: thread.threadId });
    expect(fake.callsOf("chat.update").map((c) => c.args)).toEqual([
      { channel: "C0GENERAL1", ts: id, text: "🔧 `web_search`: weather Lisbon\n🔧 `fetch_url`: ipma.pt" },
    ]);
    expect(fake.callsOf("chat.delete").map((c) => c.args)).toEqual([{ channel: "C0GENERAL1", ts: id }]);
  });

  it("a missing reactions:write scope never breaks the turn", async () => {
    const msg = await acceptedDm();
    fake.inject("reactions.add", { kind: "error", error: "missing_scope", needed: "reactions:write" });
    await expect(running.adapter.sendTyping(msg.chat)).resolves.toBeUndefined();
    await running.adapter.send(msg.chat, { text: "ok", replyToId: msg.replyToId, idempotencyKey: "r" });
    expect(fake.callsOf("chat.postMessage")).toHaveLength(1);
  });
});

describe("rate limits and faults", () => {
  it("a 429 in one chat is reported with Retry-After and does not hold back another chat", async () => {
    fake.inject("chat.postMessage", { kind: "rate_limit", retryAfterSec: 7 });
    const err = await running.adapter
      .send(thread, { text: "one", idempotencyKey: "a" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformError);
    expect(err).toMatchObject({ code: "platform_rate_limited", retryable: true, retryAfterMs: 7000 });

    const other = { platform: "slack", chatId: "C0RANDOM01", threadId: "1700000009.000900" };
    await expect(running.adapter.send(other, { text: "two", idempotencyKey: "b" })).resolves.toMatchObject({
      messageIds: [expect.any(String)],
    });

    // Back in the limited chat before Retry-After: refused here, without hammering Slack.
    const before = fake.callsOf("chat.postMessage").length;
    const early = await running.adapter
      .send(thread, { text: "one", idempotencyKey: "a" })
      .catch((e: unknown) => e);
    expect(early).toMatchObject({ retryable: true });
    expect((early as PlatformError).retryAfterMs).toBeGreaterThan(5000);
    expect(fake.callsOf("chat.postMessage")).toHaveLength(before);
  });

  it("a missing scope is a clear, non-retryable error naming the scope", async () => {
    fake.inject("chat.postMessage", { kind: "error", error: "missing_scope", needed: "chat:write" });
    const err = await running.adapter
      .send(thread, { text: "hi", idempotencyKey: "s" })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "platform_auth_failed", retryable: false });
    expect((err as Error).message).toContain("chat:write");
    expect((err as Error).message).toContain("OAuth & Permissions");
  });

  it("5xx, network-ish and non-JSON answers are retryable; a revoked token is not", async () => {
    fake.inject("chat.postMessage", { kind: "http", status: 503 });
    await expect(running.adapter.send(thread, { text: "a", idempotencyKey: "1" })).rejects.toMatchObject({
      retryable: true,
    });
    fake.inject("chat.postMessage", { kind: "malformed" });
    await expect(running.adapter.send(thread, { text: "a", idempotencyKey: "1" })).rejects.toMatchObject({
      retryable: true,
    });
    fake.revokeBotToken();
    const err = await running.adapter
      .send(thread, { text: "a", idempotencyKey: "1" })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "platform_auth_failed", retryable: false });
    expect((err as Error).message).toContain("SLACK_BOT_TOKEN");
  });

  it("a message over one chunk that fails midway reports progress so the outbox resumes", async () => {
    const text = Array.from({ length: 3 }, (_, i) => `Part ${i} ${"word ".repeat(900)}`).join("\n\n");
    const delivered: number[] = [];
    // Faults apply in order: the first chunk goes through (after no delay), the second gets a 500.
    fake.inject("chat.postMessage", { kind: "slow", delayMs: 0 });
    fake.inject("chat.postMessage", { kind: "http", status: 500 });
    const err = await running.adapter
      .send(thread, { text, idempotencyKey: "m" }, { onChunkSent: (i) => delivered.push(i) })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ retryable: true });
    expect(delivered).toEqual([0]);
  });
});
