/**
 * Replies streamed into a Telegram chat through the whole gateway: the fake Bot API records every
 * sendMessage / editMessageText and checks their HTML as Telegram does; the scripted model writes its
 * answer slowly, piece by piece.
 */
import { describe, expect, it, vi } from "vitest";
import { parseTelegramHtml } from "../fakes/telegram/html.js";
import type { FakeTelegram } from "../fakes/telegram/index.js";
import { platformPerTest } from "../helpers/per-test.js";
import { startTelegramGateway } from "./telegram-helpers.js";

const running = platformPerTest<FakeTelegram>();
const start = (env: Record<string, string> = {}) => startTelegramGateway(running, env);

const ANSWER =
  "Lisbon is the capital of **Portugal**, on the Tagus river. It is one of the oldest cities in " +
  "western Europe, older than London, Paris and Rome. Its trams climb the seven hills.";

/** The bot's live messages in the chat, once the outbox is idle. */
async function settled(
  fake: FakeTelegram,
  h: { gateway: { runner: { outbox: { idle(): Promise<void> } } } },
) {
  await h.gateway.runner.outbox.idle();
  return fake.botMessages(111);
}

describe("telegram streamed replies", () => {
  it("shows a slow answer as it is written (≥ 3 edits) and ends with the exact final text, once", async () => {
    const { fake, h } = await start();
    h.llm.script({ text: ANSWER, pieces: 12, chunkDelayMs: 400 });
    fake.userSends({ chatId: 111, fromId: 111, text: "tell me about Lisbon" });
    const final = ANSWER.replace(/\*\*/g, "");
    await vi.waitFor(() => expect(fake.botMessages(111)[0]?.text).toBe(final), { timeout: 20_000 });
    const messages = await settled(fake, h);
    expect(messages).toHaveLength(1);
    expect(messages[0]!.text).toBe(ANSWER.replace(/\*\*/g, ""));
    expect(messages[0]!.entities).toEqual([{ type: "bold", offset: 25, length: 8 }]);
    const edits = fake.callsTo("editMessageText", 111);
    expect(edits.length).toBeGreaterThanOrEqual(3);
    expect(edits.every((c) => c.status === 200 && c.params["parse_mode"] === "HTML")).toBe(true);
    // The preview grew: each edit showed more of the answer than the one before.
    const shown = edits.map((c) => parseVisible(String(c.params["text"])));
    for (let i = 1; i < shown.length; i++) expect(shown[i]!.length).toBeGreaterThan(shown[i - 1]!.length);
    expect(fake.callsTo("sendMessage", 111)).toHaveLength(1);
    expectWithinBudget(fake.calls.filter((c) => String(c.params["chat_id"]) === "111"));
    // Nothing was deleted: the one message was the preview, edited in place.
    expect(fake.callsTo("deleteMessage", 111)).toHaveLength(0);
  }, 30_000);

  it("renders an unclosed code fence and bold mid-stream as valid HTML at every step", async () => {
    const { fake, h } = await start();
    const code = Array.from({ length: 14 }, (_, i) => `const v${i} = ${i} * 2; // <tag> & "q"`).join("\n");
    const text = `Here is **the code**:\n\n\`\`\`ts\n${code}\n\`\`\`\n\nAnd **done** now.`;
    h.llm.script({ text, pieces: 10, chunkDelayMs: 400 });
    fake.userSends({ chatId: 111, fromId: 111, text: "show me code" });
    await vi.waitFor(() => expect(fake.botMessages(111)[0]?.text).toContain("done now."), {
      timeout: 20_000,
    });
    await settled(fake, h);
    const calls = [...fake.callsTo("sendMessage", 111), ...fake.callsTo("editMessageText", 111)];
    expect(calls.length).toBeGreaterThanOrEqual(4);
    for (const call of calls) {
      expect(call.status).toBe(200);
      expect(call.params["parse_mode"]).toBe("HTML");
      expect(parseTelegramHtml(String(call.params["text"])).ok).toBe(true);
    }
    // Mid-stream, the open fence was shown as a code block (closed in the preview), not as ``` text.
    const midway = calls.map((c) => String(c.params["text"])).filter((t) => t.includes("const v3"));
    expect(midway.some((t) => t.includes("<pre>") && !t.includes("done"))).toBe(true);
    expect(calls.every((c) => !String(c.params["text"]).includes("```"))).toBe(true);
    const final = fake.botMessages(111);
    expect(final).toHaveLength(1);
    expect(final[0]!.entities?.map((e) => (e as { type: string }).type)).toEqual(["bold", "pre", "bold"]);
  }, 30_000);

  it("with the chat's budget exhausted (429) ends correctly with fewer edits", async () => {
    const { fake, h } = await start();
    fake.fault("editMessageText", { status: 429, retryAfter: 3, times: 1 });
    h.llm.script({ text: ANSWER, pieces: 12, chunkDelayMs: 400 });
    fake.userSends({ chatId: 111, fromId: 111, text: "tell me about Lisbon" });
    const final = ANSWER.replace(/\*\*/g, "");
    await vi.waitFor(() => expect(fake.botMessages(111)[0]?.text).toBe(final), { timeout: 20_000 });
    const messages = await settled(fake, h);
    expect(messages).toHaveLength(1);
    const edits = fake.callsTo("editMessageText", 111);
    const accepted = edits.filter((c) => c.status === 200);
    expect(edits[0]!.status).toBe(429);
    // While Telegram said wait, no edit went: fewer than the unthrottled run's one per second.
    expect(accepted.length).toBeLessThan(5);
    const blockedUntil = edits[0]!.at + 3000;
    expect(accepted.every((c) => c.at >= blockedUntil - 50)).toBe(true);
    expect(fake.callsTo("sendMessage", 111)).toHaveLength(1);
  }, 30_000);

  it("continues a long answer into a second message, and the final text replaces both", async () => {
    const { fake, h } = await start();
    const paragraph = (i: number) => `Paragraph ${i}: ${"lorem ipsum dolor sit amet ".repeat(14).trim()}.`;
    const text = Array.from({ length: 14 }, (_, i) => paragraph(i)).join("\n\n");
    expect(text.length).toBeGreaterThan(4096);
    h.llm.script({ text, pieces: 10, chunkDelayMs: 500 });
    fake.userSends({ chatId: 111, fromId: 111, text: "write a lot" });
    await vi.waitFor(
      () =>
        expect(
          fake
            .botMessages(111)
            .map((m) => m.text)
            .join("\n\n"),
        ).toBe(text),
      {
        timeout: 25_000,
      },
    );
    const messages = await settled(fake, h);
    expect(messages).toHaveLength(2);
    // The first message was a preview written in place, then continued in the second.
    expect(fake.callsTo("sendMessage", 111)).toHaveLength(2);
    const editedIds = new Set(fake.callsTo("editMessageText", 111).map((c) => c.params["message_id"]));
    expect(editedIds.has(messages[0]!.message_id)).toBe(true);
  }, 40_000);

  it("shows tool progress beside the streamed answer; the text before the tool is replaced by the answer", async () => {
    const { fake, h } = await start();
    h.llm.script(
      {
        text: "Let me look that up in your history first, one moment please.",
        pieces: 6,
        chunkDelayMs: 150,
        toolCalls: [{ name: "session_search", arguments: { query: "tea" } }],
      },
      { text: ANSWER, pieces: 10, chunkDelayMs: 350 },
    );
    fake.userSends({ chatId: 111, fromId: 111, text: "search my history" });
    const final = ANSWER.replace(/\*\*/g, "");
    await vi.waitFor(() => expect(fake.botMessages(111).map((m) => m.text)).toEqual([final]), {
      timeout: 20_000,
    });
    await settled(fake, h);
    const sends = fake.callsTo("sendMessage", 111).map((c) => String(c.params["text"]));
    const progress = fake
      .callsTo("sendMessage", 111)
      .find((c) => String(c.params["text"]).includes("session_search"));
    expect(progress?.params).toMatchObject({ disable_notification: true });
    // The progress line went away; the streamed message was the first step's words, then the answer.
    await vi.waitFor(() => expect(fake.callsTo("deleteMessage", 111)).toHaveLength(1));
    expect(sends.filter((t) => t.startsWith("Let me look"))).toHaveLength(1);
    const edits = fake.callsTo("editMessageText", 111).map((c) => parseVisible(String(c.params["text"])));
    expect(edits.some((t) => t.startsWith("Lisbon") && t.length < final.length)).toBe(true);
    expect(edits.every((t) => !t.includes("Let me look") || !t.includes("Lisbon"))).toBe(true);
  }, 30_000);

  it("/stop mid-stream deletes the half-written preview", async () => {
    const { fake, h } = await start();
    h.llm.script({ text: ANSWER, pieces: 30, chunkDelayMs: 400 });
    fake.userSends({ chatId: 111, fromId: 111, text: "tell me about Lisbon" });
    await vi.waitFor(() => expect(fake.callsTo("sendMessage", 111)).toHaveLength(1), { timeout: 15_000 });
    const preview = fake.botMessages(111)[0]!;
    fake.userSends({
      chatId: 111,
      fromId: 111,
      text: "/stop",
      extra: { entities: [{ type: "bot_command", offset: 0, length: 5 }] },
    });
    await vi.waitFor(
      () =>
        expect(fake.callsTo("deleteMessage", 111).map((c) => c.params["message_id"])).toContain(
          preview.message_id,
        ),
      {
        timeout: 15_000,
      },
    );
    await settled(fake, h);
    expect(fake.botMessages(111).some((m) => m.message_id === preview.message_id)).toBe(false);
  }, 30_000);

  it("with TELEGRAM_STREAM=off sends the reply whole, without edits", async () => {
    const { fake, h } = await start({ TELEGRAM_STREAM: "off" });
    h.llm.script({ text: ANSWER, pieces: 6, chunkDelayMs: 200 });
    fake.userSends({ chatId: 111, fromId: 111, text: "tell me about Lisbon" });
    await vi.waitFor(() => expect(fake.botMessages(111)).toHaveLength(1), { timeout: 20_000 });
    await settled(fake, h);
    expect(fake.botMessages(111)[0]!.text).toBe(ANSWER.replace(/\*\*/g, ""));
    expect(fake.callsTo("editMessageText", 111)).toHaveLength(0);
  }, 30_000);
});

/**
 * The calls to one chat kept Telegram's per-chat budget as the adapter applies it (1 a second, burst 3):
 * any run of k calls spans at least (k − 3) seconds (less a little for network jitter).
 */
function expectWithinBudget(calls: { method: string; at: number }[]): void {
  const sent = calls.filter((c) => c.method !== "getUpdates");
  for (let i = 0; i < sent.length; i++) {
    for (let j = i + 3; j < sent.length; j++) {
      expect(sent[j]!.at - sent[i]!.at, `${sent[i]!.method}…${sent[j]!.method}`).toBeGreaterThanOrEqual(
        (j - i - 2) * 1000 - 150,
      );
    }
  }
}

function parseVisible(html: string): string {
  const parsed = parseTelegramHtml(html);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.text;
}
