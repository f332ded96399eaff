/**
 * Buttons on Telegram, through the whole gateway (fake Bot API, runner, agent loop, terminal tool): a dangerous command's approval prompt carries an inline keyboard; a click is the
 * clicker's `/approve`, runs the command once and marks the prompt; another user's click is refused.
 */
import { describe, expect, it, vi } from "vitest";
import { type FakeLlmRequest, messageText } from "../fakes/llm/index.js";
import type { FakeTelegram, StoredMessage } from "../fakes/telegram/index.js";
import { platformPerTest } from "../helpers/per-test.js";
import { botReplies, startTelegramGateway } from "./telegram-helpers.js";

const running = platformPerTest<FakeTelegram>();
// The host backend: approvals do not depend on where commands run, and this needs no bubblewrap.
const LOCAL = { HERALD_EXEC_BACKEND: "local" };

// `chattr` is on the rule table; in the sandbox it changes nothing. The proof file counts the runs.
const COMMAND = "chattr -i nothing 2>/dev/null; echo approved-run >> proof.txt; cat proof.txt";
const GROUP = -100777;
const mention = { entities: [{ type: "mention", offset: 0, length: 11 }] };

/** The fake model: asked anything, it wants to run COMMAND; given a tool result, it reports it. */
function wantsCommand(request: FakeLlmRequest) {
  const last = request.messages.at(-1);
  if (last?.role === "tool") return { text: `tool said: ${messageText(last)}` };
  return { toolCalls: [{ name: "terminal", arguments: { command: COMMAND } }] };
}

type Keyboard = { inline_keyboard: { text: string; callback_data: string }[][] };
const keyboardOf = (m: StoredMessage | undefined) =>
  (m?.["reply_markup"] as Keyboard | undefined)?.inline_keyboard;

/** Waits for the bot's message in `chatId` that carries a keyboard and returns it. */
async function promptIn(fake: FakeTelegram, chatId: number): Promise<StoredMessage> {
  await vi.waitFor(() => expect(fake.botMessages(chatId).some((m) => keyboardOf(m))).toBe(true), {
    timeout: 15_000,
  });
  // A copy: the fake edits its own message in place.
  return structuredClone(fake.botMessages(chatId).find((m) => keyboardOf(m))!);
}

describe("buttons on Telegram", () => {
  it("an approval prompt has Approve / Always / Deny; a click runs the command once and marks the prompt", async () => {
    const { fake, h } = await startTelegramGateway(running, LOCAL);
    h.llm.setDefault(wantsCommand);
    fake.userSends({ chatId: 111, fromId: 111, text: "tidy the attributes" });
    const prompt = await promptIn(fake, 111);
    expect(prompt.text).toContain("needs your approval");
    expect(prompt.text).toContain(COMMAND);
    const labels = keyboardOf(prompt)!
      .flat()
      .map((b) => b.text);
    expect(labels).toEqual(["✅ Approve", "♾️ Always", "❌ Deny"]);

    fake.userClicks({ chatId: 111, messageId: prompt.message_id, label: "✅ Approve" });
    await vi.waitFor(
      async () => expect((await botReplies(fake, 111, 2)).join("\n")).toContain("tool said:"),
      { timeout: 15_000 },
    );
    const ran = fake.botMessages(111).at(-1)!.text ?? "";
    expect(ran.match(/approved-run/g)).toHaveLength(1);
    // The spinner was stopped, and the prompt now says what was chosen, without its keyboard.
    expect(fake.callsTo("answerCallbackQuery")).toHaveLength(1);
    const marked = fake.messages(111).find((m) => m.message_id === prompt.message_id)!;
    expect(marked.text).toMatch(/✓ ✅ Approve$/);
    expect(keyboardOf(marked)).toBeUndefined();

    // A second click (the same button once more, from an old copy of the prompt) runs nothing.
    fake.pushUpdate({
      callback_query: {
        id: "again",
        from: { id: 111, is_bot: false, first_name: "User111" },
        message: prompt,
        chat_instance: "ci",
        data: keyboardOf(prompt)![0]![0]!.callback_data,
      },
    });
    await vi.waitFor(
      async () =>
        expect((await botReplies(fake, 111, 3)).at(-1)).toBe("Nothing is waiting for your approval."),
      { timeout: 10_000 },
    );
    const runs = h.llm.requests.filter((r) => r.messages.at(-1)?.role === "tool");
    expect(runs).toHaveLength(1);
  });

  it("in a group another user's click is refused; the asker's click runs it", async () => {
    const { fake, h } = await startTelegramGateway(running, { ...LOCAL, HERALD_EXEC_GROUPS: "true" });
    h.llm.setDefault(wantsCommand);
    fake.userSends({ chatId: GROUP, fromId: 111, text: "@herald_bot tidy the attributes", extra: mention });
    const prompt = await promptIn(fake, GROUP);

    fake.userClicks({ chatId: GROUP, messageId: prompt.message_id, label: "✅ Approve", fromId: 222 });
    await vi.waitFor(
      async () =>
        expect((await botReplies(fake, GROUP, 2)).at(-1)).toBe(
          "Only the person who asked can answer this request.",
        ),
      { timeout: 10_000 },
    );
    // Nothing ran, and the asker still has the buttons (given a wrong edit time to arrive).
    await new Promise((r) => setTimeout(r, 300));
    expect(fake.callsTo("editMessageText", GROUP)).toHaveLength(0);
    expect(h.llm.requests.some((r) => r.messages.at(-1)?.role === "tool")).toBe(false);
    expect(keyboardOf(fake.messages(GROUP).find((m) => m.message_id === prompt.message_id))).toBeDefined();

    fake.userClicks({ chatId: GROUP, messageId: prompt.message_id, label: "✅ Approve", fromId: 111 });
    await vi.waitFor(
      async () => expect((await botReplies(fake, GROUP, 3)).at(-1)).toMatch(/tool said:[\s\S]*approved-run/),
      { timeout: 15_000 },
    );
  });

  it("clarify with choices shows an inline keyboard; the click is the answer the model sees next", async () => {
    const { fake, h } = await startTelegramGateway(running);
    const long = `the long way round, ${"through every village on the coast ".repeat(3)}`.trim();
    h.llm.script(
      { toolCalls: [{ name: "clarify", arguments: { question: "Which route?", choices: ["Fast", long] } }] },
      (request) => ({ text: `going with: ${messageText(request.messages.at(-1))}` }),
    );
    fake.userSends({ chatId: 111, fromId: 111, text: "plan my trip" });
    const prompt = await promptIn(fake, 111);
    expect(prompt.text).toBe("Which route?");
    expect(keyboardOf(prompt)!.map((row) => row.map((b) => b.text))).toEqual([["Fast"], [long.slice(0, 64)]]);

    fake.userClicks({ chatId: 111, messageId: prompt.message_id, label: long.slice(0, 64) });
    await vi.waitFor(
      async () => expect((await botReplies(fake, 111, 2)).at(-1)).toBe(`going with: ${long}`),
      { timeout: 15_000 },
    );
    // The next turn had the question in context, right before the answer.
    const next = h.llm.requests.at(-1)!.messages;
    expect(messageText(next.at(-2))).toBe("Which route?");
    expect(next.at(-2)?.role).toBe("assistant");
    const marked = fake.messages(111).find((m) => m.message_id === prompt.message_id)!;
    expect(marked.text).toBe(`Which route?\n\n✓ ${long.slice(0, 64)}`);
    expect(keyboardOf(marked)).toBeUndefined();
  });

  it("a retried delivery and the prompt asked again after a restart keep their buttons", async () => {
    const { fake, h } = await startTelegramGateway(running, LOCAL);
    h.llm.setDefault(wantsCommand);
    // The prompt's first send fails: the outbox retries it, buttons included.
    fake.fault("sendMessage", { status: 500, when: (params) => params["reply_markup"] !== undefined });
    fake.userSends({ chatId: 111, fromId: 111, text: "tidy the attributes" });
    const first = await promptIn(fake, 111);
    expect(fake.callsTo("sendMessage", 111).filter((c) => c.params["reply_markup"])).toHaveLength(2);

    await h.restart();
    h.llm.setDefault(wantsCommand);
    await vi.waitFor(
      () =>
        expect(
          fake.botMessages(111).filter((m) => keyboardOf(m) && m.message_id !== first.message_id),
        ).toHaveLength(1),
      { timeout: 15_000 },
    );
    const again = fake.botMessages(111).find((m) => keyboardOf(m) && m.message_id !== first.message_id)!;
    expect(again.text).toContain("Still waiting after a restart");
    // The first prompt points at the new one and lost its keyboard: only one prompt can be clicked.
    const old = fake.messages(111).find((m) => m.message_id === first.message_id)!;
    expect(old.text).toMatch(/Asked again below\.$/);
    expect(keyboardOf(old)).toBeUndefined();
    fake.userClicks({ chatId: 111, messageId: again.message_id, label: "✅ Approve" });
    await vi.waitFor(
      async () => expect((await botReplies(fake, 111, 3)).at(-1)).toMatch(/tool said:[\s\S]*approved-run/),
      { timeout: 15_000 },
    );
  });

  it("a prompt answered by typing /deny loses its keyboard and says so", async () => {
    const { fake, h } = await startTelegramGateway(running, LOCAL);
    h.llm.setDefault(wantsCommand);
    fake.userSends({ chatId: 111, fromId: 111, text: "tidy the attributes" });
    const prompt = await promptIn(fake, 111);
    fake.userSends({
      chatId: 111,
      fromId: 111,
      text: "/deny",
      extra: { entities: [{ type: "bot_command", offset: 0, length: 5 }] },
    });
    await vi.waitFor(
      () => {
        const settled = fake.messages(111).find((m) => m.message_id === prompt.message_id)!;
        expect(settled.text).toMatch(/✗ Denied$/);
        expect(keyboardOf(settled)).toBeUndefined();
      },
      { timeout: 15_000 },
    );
    // Nothing ran: the model was told in the call's own result.
    await vi.waitFor(() => {
      const results = h.llm.requests.filter((r) => r.messages.at(-1)?.role === "tool");
      expect(results.map((r) => messageText(r.messages.at(-1)))).toEqual([
        "not run: the user denied it. Do not run it another way; say what you will do instead.",
      ]);
    });
  });

  it("a prompt nobody answered loses its keyboard when the request lapses", async () => {
    const { fake, h } = await startTelegramGateway(running, {
      ...LOCAL,
      HERALD_EXEC_APPROVAL_TIMEOUT_S: "1",
    });
    h.llm.setDefault(wantsCommand);
    fake.userSends({ chatId: 111, fromId: 111, text: "tidy the attributes" });
    const prompt = await promptIn(fake, 111);
    await vi.waitFor(
      () => {
        const settled = fake.messages(111).find((m) => m.message_id === prompt.message_id)!;
        expect(settled.text).toMatch(/⌛ Lapsed: nothing was run\.$/);
        expect(keyboardOf(settled)).toBeUndefined();
      },
      { timeout: 15_000 },
    );
  });

  it("when the prompt's text cannot be edited, its keyboard is still removed", async () => {
    const { fake, h } = await startTelegramGateway(running);
    h.llm.script(
      {
        toolCalls: [
          { name: "clarify", arguments: { question: "Tea or coffee?", choices: ["Tea", "Coffee"] } },
        ],
      },
      (request) => ({ text: `making ${messageText(request.messages.at(-1))}` }),
    );
    fake.userSends({ chatId: 111, fromId: 111, text: "a drink please" });
    const prompt = await promptIn(fake, 111);
    fake.fault("editMessageText", { status: 400, description: "Bad Request: MESSAGE_TOO_LONG" });
    fake.userClicks({ chatId: 111, messageId: prompt.message_id, label: "Tea" });
    await vi.waitFor(async () => expect((await botReplies(fake, 111, 2)).at(-1)).toBe("making Tea"), {
      timeout: 15_000,
    });
    await vi.waitFor(() => expect(fake.callsTo("editMessageReplyMarkup", 111)).toHaveLength(1));
    const marked = fake.messages(111).find((m) => m.message_id === prompt.message_id)!;
    expect(marked.text).toBe("Tea or coffee?");
    expect(keyboardOf(marked)).toBeUndefined();
  });
});
