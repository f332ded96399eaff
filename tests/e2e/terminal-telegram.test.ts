/**
 * The terminal tools as a Telegram user meets them: `$ <command>` shown while it runs, the answer in
 * the chat, and a background job that tells the chat when it finishes (notify_on_exit).
 */
import { describe, expect, it, vi } from "vitest";
import type { FakeTelegram } from "../fakes/telegram/index.js";
import { platformPerTest } from "../helpers/per-test.js";
import { botReplies, fixture, startTelegramGateway } from "./telegram-helpers.js";

const running = platformPerTest<FakeTelegram>();

describe("terminal tools on Telegram", () => {
  it("runs a command and answers; a background job with notify_on_exit reports its end to the chat", async () => {
    const { fake, h } = await startTelegramGateway(running);
    h.llm.script(
      { toolCalls: [{ name: "terminal", arguments: { command: "echo from-the-sandbox" } }] },
      (req) => ({ text: `ran: ${String(req.messages.at(-1)?.content ?? "")}` }),
      {
        toolCalls: [
          {
            name: "terminal",
            arguments: { command: "sleep 0.3; echo built", background: true, notify_on_exit: true },
          },
        ],
      },
      { text: "started the build; I'll tell you when it's done" },
    );
    fake.pushUpdate(await fixture("private-text"));
    // The answer, not the progress line (which names the command too): only then is the turn over.
    await vi.waitFor(
      async () => expect((await botReplies(fake, 111, 1)).join("\n")).toMatch(/ran: [\s\S]*from-the-sandbox/),
      { timeout: 15_000 },
    );
    // The progress line said what ran, as a shell prompt would.
    const sent = fake.callsTo("sendMessage", 111).map((c) => String(c.params["text"] ?? ""));
    expect(sent.some((t) => t.includes("$ echo from-the-sandbox"))).toBe(true);
    fake.userSends({ chatId: 111, fromId: 111, text: "now build it in the background" });
    await vi.waitFor(
      async () => {
        const texts = (await botReplies(fake, 111, 1)).join("\n");
        expect(texts).toContain("started the build");
        expect(texts).toMatch(/Background process \S+ finished \(exit code 0\)/);
      },
      { timeout: 15_000 },
    );
  });
});
