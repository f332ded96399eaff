/**
 * `/background`, `/tasks` and `/stop <id>` through the whole gateway in front of the fake Telegram: a
 * background task runs in its own session (the chat stays free), its answer arrives once even when the
 * gateway crashed in the middle, `/tasks` shows the states, `/stop <id>` cancels one task.
 */
import { describe, expect, it } from "vitest";
import { messageText } from "../fakes/llm/index.js";
import type { FakeTelegram } from "../fakes/telegram/index.js";
import { platformPerTest } from "../helpers/per-test.js";
import { botReplies, startTelegramGateway } from "./telegram-helpers.js";

const running = platformPerTest<FakeTelegram>();

const send = (fake: FakeTelegram, text: string) => {
  const length = text.startsWith("/") ? (text.indexOf(" ") < 0 ? text.length : text.indexOf(" ")) : 0;
  const extra = length ? { entities: [{ type: "bot_command", offset: 0, length }] } : undefined;
  fake.userSends({ chatId: 111, fromId: 111, text, ...(extra ? { extra } : {}) });
};

describe("/background", () => {
  it("answers once across a gateway crash; the chat stays free meanwhile; /tasks shows the state", async () => {
    const { fake, h } = await startTelegramGateway(running);
    let attempts = 0;
    h.llm.setDefault((request) => {
      const text = messageText(request.messages.at(-1));
      if (text === "research the moon") {
        attempts++;
        return attempts === 1
          ? { text: "never sent", delayMs: 30_000 }
          : { text: "the moon report", delayMs: 0 };
      }
      return { text: `echo: ${text}` };
    });
    send(fake, "/background research the moon");
    const [started] = await botReplies(fake, 111, 1);
    const id = /Background task (bg[0-9a-f]{6}) started/.exec(started ?? "")?.[1];
    expect(id, started).toBeDefined();
    await h.llm.waitForRequests(1);
    // The chat's own session is not busy.
    send(fake, "hello");
    expect((await botReplies(fake, 111, 2))[1]).toBe("echo: hello");
    send(fake, "/tasks");
    expect((await botReplies(fake, 111, 3))[2]).toContain(`${id} ⏳ running: research the moon`);

    await h.crash();
    await h.start();
    const texts = await botReplies(fake, 111, 4);
    expect(texts[3]).toBe(`🔙 Background task ${id}:\nthe moon report`);
    await h.gateway.runner.outbox.idle();
    await h.restart();
    await h.gateway.runner.outbox.idle();
    send(fake, "/tasks");
    const after = await botReplies(fake, 111, 5);
    expect(after[4]).toContain(`${id} ✅ done`);
    expect(after.filter((t) => t.includes("the moon report"))).toHaveLength(1);
    expect(attempts).toBe(2);
    // Its own session: the chat's history does not hold the background conversation.
    const chatRequest = h.llm.requests.find((r) => messageText(r.messages.at(-1)) === "hello")!;
    expect(JSON.stringify(chatRequest.messages)).not.toContain("research the moon");
  });

  it("/stop <id> cancels one background task", async () => {
    const { fake, h } = await startTelegramGateway(running);
    h.llm.setDefault(() => ({ text: "never sent", delayMs: 60_000 }));
    send(fake, "/background count the stars");
    const [started] = await botReplies(fake, 111, 1);
    const id = /Background task (bg[0-9a-f]{6})/.exec(started ?? "")?.[1];
    await h.llm.waitForRequests(1);
    send(fake, `/stop ${id}`);
    expect((await botReplies(fake, 111, 2))[1]).toBe(`⏹ Stopped background task ${id}.`);
    await h.llm.waitForClosedEarly(1);
    send(fake, "/tasks");
    expect((await botReplies(fake, 111, 3))[2]).toContain(`${id} ⏹ cancelled`);
  });
});
