/**
 * `send_message` through the whole gateway and the Telegram fake: the owner (a user the config's
 * allowlist names) sends to another chat and to a home channel; a user admitted only by
 * GATEWAY_ALLOW_ALL_USERS is refused for other chats but may send to their own; a turn run again after a
 * crash sends its message once.
 */
import { describe, expect, it, vi } from "vitest";
import type { FakeLlmRequest } from "../fakes/llm/index.js";
import type { FakeTelegram } from "../fakes/telegram/index.js";
import { chat } from "../helpers/gateway-harness.js";
import { platformPerTest } from "../helpers/per-test.js";
import { botReplies, fixture, startTelegramGateway } from "./telegram-helpers.js";

const running = platformPerTest<FakeTelegram>();

const toolResults = (request: FakeLlmRequest | undefined) =>
  (request?.messages ?? []).filter((m) => m.role === "tool").map((m) => String(m.content));

const texts = (fake: FakeTelegram, chatId: number) => fake.botMessages(chatId).map((m) => m.text ?? "");

describe("send_message", () => {
  it("the owner sends to another chat and to the platform's home channel", async () => {
    const { fake, h } = await startTelegramGateway(running, { TELEGRAM_HOME_CHANNEL: "444" });
    h.llm.script(
      {
        toolCalls: [
          {
            name: "send_message",
            arguments: { target: "telegram:222", text: "The meeting moved to **3 pm**." },
          },
          { name: "send_message", arguments: { target: "telegram", text: "Daily note: meeting at 3 pm." } },
        ],
      },
      { text: "Told Bob and the team channel." },
    );
    fake.userSends({ chatId: 111, fromId: 111, text: "tell Bob and the team the meeting is at 3" });
    expect(await botReplies(fake, 111, 1)).toEqual(["Told Bob and the team channel."]);
    expect(await botReplies(fake, 222, 1)).toEqual(["The meeting moved to 3 pm."]);
    expect(await botReplies(fake, 444, 1)).toEqual(["Daily note: meeting at 3 pm."]);
    expect(toolResults(h.llm.requests[1])).toEqual(["Sent to telegram:222.", "Sent to telegram:444."]);
  });

  it("from the API server (the operator's key) to a Telegram chat: another platform", async () => {
    const { fake, h } = await startTelegramGateway(running);
    h.llm.script(
      {
        toolCalls: [
          { name: "send_message", arguments: { target: "telegram:222", text: "Build 118 is green." } },
        ],
      },
      { text: "Posted to Telegram." },
    );
    expect((await chat(h, "tell the Telegram chat the build is green")).text).toBe("Posted to Telegram.");
    expect(await botReplies(fake, 222, 1)).toEqual(["Build 118 is green."]);
  });

  it("a user who is allowed but not the owner may send to their own chat only", async () => {
    const { fake, h } = await startTelegramGateway(running, { GATEWAY_ALLOW_ALL_USERS: "true" });
    h.llm.script(
      {
        toolCalls: [
          { name: "send_message", arguments: { target: "telegram:222", text: "spam" } },
          { name: "send_message", arguments: { target: "origin", text: "A note to myself." } },
        ],
      },
      { text: "I could only write to you." },
    );
    fake.userSends({ chatId: 333, fromId: 333, text: "message user 222 for me" });
    await vi.waitFor(() => expect(texts(fake, 333)).toContain("I could only write to you."), {
      timeout: 10_000,
    });
    expect(texts(fake, 333)).toContain("A note to myself.");
    const [refused, own] = toolResults(h.llm.requests[1]);
    expect(refused).toMatch(/error: .*only the owner may send to another chat \(telegram:222\)/);
    expect(own).toBe("Sent to telegram:333.");
    expect(texts(fake, 222)).toEqual([]);
  });

  it("sends a file from the workspace: a document the owner attached, forwarded to another chat", async () => {
    const { fake, h } = await startTelegramGateway(running);
    const doc = fake.addFile("quarterly figures: 42", "documents/report.txt");
    const update = await fixture("private-document");
    (update["message"] as Record<string, unknown>)["document"] = {
      ...doc,
      file_name: "report.txt",
      mime_type: "text/plain",
    };
    h.llm.script(
      (request) => {
        // The model finds the document where the attachment note says it is (its workspace copy).
        const file = /(\S*attachments\/report\.txt)/.exec(String(request.messages.at(-1)?.content))?.[1];
        return {
          toolCalls: [
            {
              name: "send_message",
              arguments: { target: "telegram:222", text: "The report:", file: file ?? "missing" },
            },
          ],
        };
      },
      { text: "Forwarded." },
    );
    fake.pushUpdate(update);
    expect(await botReplies(fake, 111, 1)).toEqual(["Forwarded."]);
    await vi.waitFor(() => expect(fake.callsTo("sendDocument", 222)).toHaveLength(1), { timeout: 10_000 });
    expect(texts(fake, 222)[0]).toBe("The report:");
    const upload = Object.values(fake.callsTo("sendDocument", 222)[0]!.files)[0]!;
    expect(upload.content.toString()).toBe("quarterly figures: 42");
  });

  it("an unknown target names the forms that work", async () => {
    const { fake, h } = await startTelegramGateway(running);
    h.llm.script(
      { toolCalls: [{ name: "send_message", arguments: { target: "telegarm:5", text: "x" } }] },
      { text: "ok" },
    );
    fake.userSends({ chatId: 111, fromId: 111, text: "send it" });
    await botReplies(fake, 111, 1);
    expect(toolResults(h.llm.requests[1])[0]).toMatch(/"telegarm" is not a platform Herald knows.*Targets:/);
  });

  it("is delivered once when the turn runs again after a crash", async () => {
    const { fake, h } = await startTelegramGateway(running);
    const send = {
      toolCalls: [
        {
          id: "call_send_1",
          name: "send_message",
          arguments: { target: "telegram:222", text: "Once only." },
        },
      ],
    };
    h.llm.script(send, { text: "never delivered", delayMs: 60_000 });
    fake.userSends({ chatId: 111, fromId: 111, text: "tell 222 once" });
    await vi.waitFor(() => expect(texts(fake, 222)).toEqual(["Once only."]), { timeout: 10_000 });
    await h.llm.waitForRequests(2);
    // A key whose outbox item is gone (pruned after 14 days) is dropped at start; this turn's stays.
    h.state.kv("sent-messages").set("send:old-turn:call_1", "0190aaaa-0000-7000-8000-000000000000");
    await h.state.committed();
    await h.crash();

    // After the restart the turn runs again and the model repeats the same call.
    h.llm.script(send, { text: "Done." });
    await h.start();
    expect(await botReplies(fake, 111, 1)).toEqual(["Done."]);
    expect(texts(fake, 222)).toEqual(["Once only."]);
    expect(toolResults(h.llm.requests[3])[0]).toMatch(/Already sent to telegram:222 .*not sent again/);
    expect(h.state.kv("sent-messages").get("send:old-turn:call_1")).toBeUndefined();
  });
});
