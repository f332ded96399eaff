/**
 * Sending through the real adapter to the fake Bot API (which parses HTML like Telegram and refuses what
 * Telegram refuses): long replies in valid chunks, the plain-text fallback, per-chat 429s, the status
 * message, typing.
 */
import { afterEach, describe, expect, it } from "vitest";
import { PlatformError } from "../../core/errors.js";
import type { ChatRef } from "../../core/types.js";
import { type TelegramRig, telegramRig } from "./telegram-helpers.js";

let rig: TelegramRig;
afterEach(async () => {
  await rig?.close();
});

const dm = (id: number): ChatRef => ({ platform: "telegram", chatId: String(id) });

/** A ~10,000-character answer with prose, lists and long code blocks. */
function longReply(): { text: string; codeLines: string[] } {
  const codeLines: string[] = [];
  const parts: string[] = [
    "# Report",
    "Here is **the whole** analysis, with `inline code` & <angle brackets>.",
  ];
  for (let section = 0; section < 6; section++) {
    parts.push(
      `## Section ${section}`,
      `Paragraph ${section}: ${"the engine computes numbers ".repeat(12).trim()}.`,
    );
    parts.push(Array.from({ length: 5 }, (_, i) => `- item ${section}.${i} with *emphasis*`).join("\n"));
    const lines = Array.from(
      { length: 30 },
      (_, i) => `    result_${section}_${i} = compute(x < ${i}, "s&${i}")`,
    );
    codeLines.push(...lines);
    parts.push(`\`\`\`python\ndef section_${section}():\n${lines.join("\n")}\n\`\`\``);
  }
  return { text: parts.join("\n\n"), codeLines };
}

describe("telegram: sending", () => {
  it("a 10,000-character reply with code blocks arrives as valid chunks, in order, code fences reopened", async () => {
    rig = await telegramRig({ limits: { perChatBurst: 10 } });
    await rig.start();
    const { text, codeLines } = longReply();
    expect(text.length).toBeGreaterThan(10_000);
    const sentIndexes: number[] = [];
    const result = await rig.adapter.send(
      dm(111),
      { text, idempotencyKey: "long" },
      { onChunkSent: (i) => sentIndexes.push(i) },
    );

    const calls = rig.fake.callsTo("sendMessage");
    expect(calls.every((c) => c.status === 200 && c.params["parse_mode"] === "HTML")).toBe(true);
    const messages = rig.fake.botMessages(111);
    expect(messages.length).toBeGreaterThanOrEqual(3);
    expect(result.messageIds).toEqual(messages.map((m) => String(m.message_id)));
    expect(sentIndexes).toEqual(messages.map((_, i) => i));
    for (const m of messages) expect(m.text!.length).toBeLessThanOrEqual(4096);
    // Every code line arrives once, in order, inside a python code block.
    const arrived = messages.flatMap((m) => m.text!.split("\n").filter((l) => l.includes("result_")));
    expect(arrived.map((l) => l.trim())).toEqual(codeLines.map((l) => l.trim()));
    for (const m of messages) {
      const pres = (
        m.entities as { type: string; language?: string; offset: number; length: number }[]
      ).filter((e) => e.type === "pre");
      for (const pre of pres) expect(pre.language).toBe("python");
      const codeInMessage = m.text!.split("\n").filter((l) => l.includes("result_"));
      const inPre = pres.reduce(
        (n, e) =>
          n +
          m
            .text!.slice(e.offset, e.offset + e.length)
            .split("\n")
            .filter((l) => l.includes("result_")).length,
        0,
      );
      expect(inPre).toBe(codeInMessage.length);
    }
    const all = messages.map((m) => m.text).join("\n");
    expect(all).toContain("with inline code & <angle brackets>.");
    expect(all).not.toMatch(/\*\*|```|&amp;|&lt;/);
  });

  it("counts emoji as two units: 3,000 emoji need two messages", async () => {
    rig = await telegramRig();
    await rig.start();
    await rig.adapter.send(dm(111), { text: "😀".repeat(3000), idempotencyKey: "e" });
    const messages = rig.fake.botMessages(111);
    expect(messages).toHaveLength(2);
    expect(messages.map((m) => m.text).join("")).toBe("😀".repeat(3000));
  });

  it("resumes a retried reply at fromChunk without re-sending delivered chunks", async () => {
    rig = await telegramRig({ limits: { perChatBurst: 10 } });
    await rig.start();
    const text = Array.from({ length: 3 }, (_, i) => `Part ${i} ${"x".repeat(3000)}`).join("\n\n");
    rig.fake.fault("sendMessage", { status: 500, when: (p) => String(p["text"]).startsWith("Part 1") });
    const delivered: number[] = [];
    const error = await rig.adapter
      .send(dm(111), { text, idempotencyKey: "r" }, { onChunkSent: (i) => delivered.push(i) })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ retryable: true });
    expect(delivered).toEqual([0]);
    await rig.adapter.send(
      dm(111),
      { text, idempotencyKey: "r" },
      { fromChunk: 1, onChunkSent: (i) => delivered.push(i) },
    );
    expect(delivered).toEqual([0, 1, 2]);
    expect(rig.fake.botMessages(111).map((m) => m.text!.slice(0, 6))).toEqual(["Part 0", "Part 1", "Part 2"]);
  });

  it("when Telegram rejects the markup, sends the same text once as plain text", async () => {
    rig = await telegramRig();
    await rig.start();
    rig.fake.fault("sendMessage", {
      status: 400,
      description: 'Bad Request: can\'t parse entities: Unsupported start tag "b" at byte offset 0',
      when: (p) => p["parse_mode"] === "HTML",
    });
    await rig.adapter.send(dm(111), { text: "**Done**: see `x`", idempotencyKey: "p" });
    const messages = rig.fake.botMessages(111);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({ text: "**Done**: see `x`", formatted: false });
    expect(rig.fake.callsTo("sendMessage").map((c) => [c.status, c.params["parse_mode"]])).toEqual([
      [400, "HTML"],
      [200, undefined],
    ]);
  });

  it("a 429 on one chat delays only that chat, and is honoured without calling Telegram again", async () => {
    rig = await telegramRig();
    await rig.start();
    rig.fake.fault("sendMessage", { status: 429, retryAfter: 1, chatId: 111 });
    const [a, b] = await Promise.allSettled([
      rig.adapter.send(dm(111), { text: "to A", idempotencyKey: "a" }),
      rig.adapter.send(dm(222), { text: "to B", idempotencyKey: "b" }),
    ]);
    expect(a.status).toBe("rejected");
    const err = (a as PromiseRejectedResult).reason as PlatformError;
    expect(err).toBeInstanceOf(PlatformError);
    expect(err).toMatchObject({ code: "platform_rate_limited", retryable: true, retryAfterMs: 1000 });
    expect(b.status).toBe("fulfilled");
    expect(rig.fake.botMessages(222).map((m) => m.text)).toEqual(["to B"]);

    // While the wait runs, chat A is not called at all (sends and typing), chat B is.
    const again = await rig.adapter
      .send(dm(111), { text: "to A", idempotencyKey: "a" })
      .catch((e: unknown) => e);
    expect(again).toMatchObject({ retryable: true });
    expect((again as PlatformError).retryAfterMs).toBeLessThanOrEqual(1000);
    await rig.adapter.sendTyping(dm(111));
    await rig.adapter.send(dm(222), { text: "to B again", idempotencyKey: "b2" });
    expect(rig.fake.callsTo("sendMessage", 111)).toHaveLength(1);
    expect(rig.fake.callsTo("sendChatAction", 111)).toHaveLength(0);

    await new Promise((r) => setTimeout(r, (again as PlatformError).retryAfterMs ?? 1000));
    await rig.adapter.send(dm(111), { text: "to A", idempotencyKey: "a" });
    expect(rig.fake.botMessages(111).map((m) => m.text)).toEqual(["to A"]);
  });

  it("maps other failures: 403 is final, 5xx is retryable", async () => {
    rig = await telegramRig();
    await rig.start();
    rig.fake.fault("sendMessage", { status: 403 });
    const blocked = await rig.adapter
      .send(dm(111), { text: "hi", idempotencyKey: "x" })
      .catch((e: unknown) => e);
    expect(blocked).toMatchObject({ retryable: false });
    expect((blocked as Error).message).toMatch(/blocked the bot/);
    rig.fake.fault("sendMessage", { status: 500 });
    const down = await rig.adapter
      .send(dm(222), { text: "hi", idempotencyKey: "y" })
      .catch((e: unknown) => e);
    expect(down).toMatchObject({ retryable: true });
  });

  it("tool progress: one silent status message, edited in place, then deleted", async () => {
    rig = await telegramRig();
    await rig.start();
    const group: ChatRef = { platform: "telegram", chatId: "-100555" };
    const { messageIds } = await rig.adapter.send(group, {
      text: "🔧 searching…",
      kind: "notice",
      replyToId: "7",
      idempotencyKey: "n",
    });
    const id = messageIds[0]!;
    const notice = rig.fake.callsTo("sendMessage")[0]!;
    expect(notice.params).toMatchObject({ disable_notification: true });
    expect(notice.params["reply_parameters"]).toBeUndefined();

    // Edits while the chat's budget is spent are merged: only the latest text goes out.
    await Promise.all([
      rig.adapter.edit(group, id, "🔧 searching…\n📄 reading"),
      rig.adapter.edit(group, id, "🔧 searching…\n📄 reading\n🧮 computing"),
      rig.adapter.edit(group, id, "🔧 searching…\n📄 reading\n🧮 computing\n✍️ writing"),
    ]);
    const edits = rig.fake.callsTo("editMessageText");
    expect(edits.length).toBeLessThan(3);
    expect(rig.fake.messages("-100555")[0]!.text).toBe("🔧 searching…\n📄 reading\n🧮 computing\n✍️ writing");
    // The same text again is not an error.
    await rig.adapter.edit(group, id, "🔧 searching…\n📄 reading\n🧮 computing\n✍️ writing");

    await rig.adapter.deleteMessage(group, id);
    expect(rig.fake.botMessages("-100555")).toHaveLength(0);
    // Deleting twice (a retry) is not an error either.
    await rig.adapter.deleteMessage(group, id);
  });
});
