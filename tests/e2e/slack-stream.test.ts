/**
 * Replies streamed into a Slack channel through the whole gateway: the fake Slack records every
 * chat.postMessage / chat.update; the scripted model writes its answer slowly, piece by piece.
 */
import { describe, expect, it, vi } from "vitest";
import {
  eventCallback,
  type FakeSlack,
  messageEvent,
  signedRequest,
  startFakeSlack,
} from "../fakes/slack/index.js";
import type { Harness } from "../helpers/gateway-harness.js";
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
      SLACK_ALLOWED_USERS: "U0ALICE01",
      ...env,
    },
  });
  return { fake, h };
}

/** Alice writes in her DM with the bot, delivered to the gateway's public URL as Slack would. */
async function aliceSays(h: Harness, ts: string, text: string) {
  const body = eventCallback(messageEvent({ channel: "D0ALICE01", ts, text }));
  const res = await fetch(
    signedRequest(body, { secret: SIGNING_SECRET, url: `${h.apiUrl}/webhooks/slack/events` }),
  );
  expect(res.status).toBe(200);
}

const ANSWER =
  "Lisbon is the capital of **Portugal**, on the Tagus river. It is one of the oldest cities in " +
  "western Europe, older than London, Paris and Rome. Its trams climb the seven hills.";
const RENDERED = ANSWER.replace("**Portugal**", "*Portugal*");

/** What a message shows now: its last update, else what it was posted with. */
function shownText(fake: FakeSlack, ts: string): string | undefined {
  const updates = fake.callsOf("chat.update").filter((c) => c.args["ts"] === ts);
  const last = updates.at(-1);
  if (last) return String(last.args["text"]);
  return undefined;
}

async function postedTs(fake: FakeSlack): Promise<string[]> {
  await vi.waitFor(() => expect(fake.callsOf("chat.postMessage").length).toBeGreaterThanOrEqual(1), {
    timeout: 15_000,
  });
  // The fake answers posts with increasing ts; recover them from the updates that name them.
  return [...new Set(fake.callsOf("chat.update").map((c) => String(c.args["ts"])))];
}

describe("slack streamed replies", () => {
  it("shows a slow answer as it is written (≥ 3 updates) and ends with the exact final text, once", async () => {
    const { fake, h } = await start();
    h.llm.script({ text: ANSWER, pieces: 12, chunkDelayMs: 400 });
    await aliceSays(h, "1700000001.000100", "tell me about Lisbon");
    await vi.waitFor(() => expect(fake.callsOf("chat.update").at(-1)?.args["text"]).toBe(RENDERED), {
      timeout: 20_000,
    });
    await h.gateway.runner.outbox.idle();
    const posts = fake.callsOf("chat.postMessage");
    expect(posts).toHaveLength(1);
    expect(posts[0]!.args["channel"]).toBe("D0ALICE01");
    expect(String(posts[0]!.args["text"]).length).toBeLessThan(RENDERED.length);
    const updates = fake.callsOf("chat.update");
    expect(updates.length).toBeGreaterThanOrEqual(3);
    // One message, updated in place, growing each time.
    const [ts] = await postedTs(fake);
    expect(updates.every((c) => c.args["ts"] === ts)).toBe(true);
    const lengths = updates.map((c) => String(c.args["text"]).length);
    for (let i = 1; i < lengths.length; i++) expect(lengths[i]).toBeGreaterThan(lengths[i - 1]!);
    expect(shownText(fake, ts!)).toBe(RENDERED);
    expect(fake.callsOf("chat.delete")).toHaveLength(0);
  }, 30_000);

  it("rate-limited (429 on chat.update) ends correctly with fewer updates", async () => {
    const { fake, h } = await start();
    fake.inject("chat.update", { kind: "rate_limit", retryAfterSec: 3 });
    h.llm.script({ text: ANSWER, pieces: 12, chunkDelayMs: 400 });
    await aliceSays(h, "1700000002.000100", "tell me about Lisbon");
    await vi.waitFor(() => expect(fake.callsOf("chat.update").at(-1)?.args["text"]).toBe(RENDERED), {
      timeout: 20_000,
    });
    await h.gateway.runner.outbox.idle();
    expect(fake.callsOf("chat.postMessage")).toHaveLength(1);
    // The first update was refused; for 3 s nothing more was tried, so fewer went than one a second.
    const updates = fake.callsOf("chat.update");
    expect(updates.length).toBeGreaterThanOrEqual(2);
    expect(updates.length).toBeLessThan(5);
    expect(fake.callsOf("chat.delete")).toHaveLength(0);
  }, 30_000);

  it("keeps code fences closed mid-stream and continues a long answer into a second message", async () => {
    const { fake, h } = await start();
    const code = Array.from(
      { length: 40 },
      (_, i) => `const v${i} = ${i} * 2; // step ${i} of the work`,
    ).join("\n");
    const paragraph = (i: number) => `Paragraph ${i}: ${"lorem ipsum dolor sit amet ".repeat(12).trim()}.`;
    const paragraphs = (from: number, to: number) =>
      Array.from({ length: to - from }, (_, i) => paragraph(from + i)).join("\n\n");
    const text = `${paragraphs(0, 8)}\n\n\`\`\`\n${code}\n\`\`\`\n\n${paragraphs(8, 16)}\n\nThat is all.`;
    expect(text.length).toBeGreaterThan(4000);
    h.llm.script({ text, pieces: 12, chunkDelayMs: 450 });
    await aliceSays(h, "1700000004.000100", "write a lot");
    await vi.waitFor(
      () => {
        const posts = fake.callsOf("chat.postMessage");
        expect(posts.length).toBeGreaterThanOrEqual(2);
        const last = fake.callsOf("chat.update").filter((c) => c.args["ts"] !== undefined);
        expect([...posts, ...last].some((c) => String(c.args["text"]).endsWith("That is all."))).toBe(true);
      },
      { timeout: 25_000 },
    );
    await h.gateway.runner.outbox.idle();
    // Every text Slack was given, preview or final, has its code fences paired.
    const texts = [...fake.callsOf("chat.postMessage"), ...fake.callsOf("chat.update")].map((c) =>
      String(c.args["text"]),
    );
    expect(texts.every((t) => (t.match(/```/g) ?? []).length % 2 === 0)).toBe(true);
    expect(texts.some((t) => t.includes("const v3") && !t.includes("That is all."))).toBe(true);
    // The preview itself went on in a second message (updated in place) before the answer was done.
    const updated = new Set(fake.callsOf("chat.update").map((c) => c.args["ts"]));
    expect(updated.size).toBeGreaterThanOrEqual(2);
    // Whatever was posted and not deleted shows the answer's chunks, in order, ending with its end.
    const deleted = new Set(fake.callsOf("chat.delete").map((c) => c.args["ts"]));
    const visible = [...updated].filter((ts) => !deleted.has(ts));
    const lastOf = (ts: unknown) =>
      fake
        .callsOf("chat.update")
        .filter((c) => c.args["ts"] === ts)
        .at(-1);
    const shown = visible.map((ts) => String(lastOf(ts)?.args["text"]));
    const later = fake.callsOf("chat.postMessage").length - updated.size;
    if (later === 0) expect(shown.at(-1)!.endsWith("That is all.")).toBe(true);
    expect(shown[0]!.startsWith("Paragraph 0:")).toBe(true);
  }, 40_000);

  it("with SLACK_STREAM=off posts the reply whole, without updates", async () => {
    const { fake, h } = await start({ SLACK_STREAM: "off" });
    h.llm.script({ text: ANSWER, pieces: 6, chunkDelayMs: 200 });
    await aliceSays(h, "1700000003.000100", "tell me about Lisbon");
    await vi.waitFor(() => expect(fake.callsOf("chat.postMessage")).toHaveLength(1), { timeout: 15_000 });
    await h.gateway.runner.outbox.idle();
    expect(fake.callsOf("chat.postMessage")[0]!.args["text"]).toBe(RENDERED);
    expect(fake.callsOf("chat.update")).toHaveLength(0);
  }, 30_000);
});
