/**
 * `delegate_task` in front of the fake Telegram: the progress line shows the children's states, and a
 * child that needs the user's approval for a dangerous command runs nothing: its question reaches the
 * chat with the Approve / Deny buttons (a child's reply goes to its parent, so the gateway posts it);
 * approved, the command runs in a turn of the chat's session.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { workspaceDirName } from "../../agent/exec/index.js";
import { type FakeLlmRequest, messageText } from "../fakes/llm/index.js";
import type { FakeTelegram } from "../fakes/telegram/index.js";
import { platformPerTest } from "../helpers/per-test.js";
import { startTelegramGateway } from "./telegram-helpers.js";

const running = platformPerTest<FakeTelegram>();
// `chattr` is on the rule table; in the sandbox it changes nothing.
const COMMAND = "chattr -i nothing 2>/dev/null; echo child-ran >> proof.txt";
const isChild = (r: FakeLlmRequest) => messageText(r.messages[0]).includes("sub-agent");

type Keyboard = { inline_keyboard: { text: string; callback_data: string }[][] };

describe("delegate_task on Telegram", () => {
  it("shows the children on the progress line; a child's approval request reaches the chat with buttons", async () => {
    const { fake, h } = await startTelegramGateway(running);
    h.llm.setDefault((request) => {
      const last = request.messages.at(-1);
      if (last?.role === "tool")
        return { text: isChild(request) ? "child done" : `parent: ${messageText(last)}` };
      if (isChild(request)) {
        const goal = messageText(request.messages[1]);
        return goal === "tidy the attributes"
          ? { toolCalls: [{ name: "terminal", arguments: { command: COMMAND } }] }
          : { text: "counted 3 files", delayMs: 2_500 };
      }
      return {
        toolCalls: [
          {
            name: "delegate_task",
            arguments: { tasks: [{ goal: "tidy the attributes" }, { goal: "count the files" }] },
          },
        ],
      };
    });
    fake.userSends({ chatId: 111, fromId: 111, text: "clean up please" });
    await vi.waitFor(
      () => expect(fake.botMessages(111).some((m) => (m.text ?? "").startsWith("parent:"))).toBe(true),
      { timeout: 20_000 },
    );
    const texts = fake.botMessages(111).map((m) => m.text ?? "");
    const reply = texts.find((t) => t.startsWith("parent:"))!;
    expect(reply).toContain("## Task 1: done");
    expect(reply).toContain("needs your approval");
    expect(reply).toContain("counted 3 files");
    // The question with its buttons, posted by the gateway.
    const asked = fake.botMessages(111).find((m) => (m.text ?? "").startsWith("🧩 A subtask asks"));
    expect(asked?.text).toContain(COMMAND);
    const keyboard = (asked?.["reply_markup"] as Keyboard | undefined)?.inline_keyboard;
    expect(
      keyboard
        ?.flat()
        .map((b) => b.text)
        .join(" "),
    ).toMatch(/Approve.*Deny/);
    // Not approvals-free: nothing ran.
    const proof = join(h.homeDir, "workspaces", workspaceDirName("telegram:dm:111"), "proof.txt");
    expect(existsSync(proof)).toBe(false);
    // The progress message showed the children (edited in place; edits are 1.5 s apart).
    const progress = [...fake.callsTo("sendMessage", 111), ...fake.callsTo("editMessageText", 111)]
      .map((c) => String(c.params["text"] ?? ""))
      .filter((t) => t.includes("🧩 subtasks"));
    expect(progress.length, JSON.stringify(fake.callsTo("editMessageText", 111))).toBeGreaterThan(0);

    // Approved, the child's command runs in a turn of the chat's session, as a call of its own whose
    // result the model reads next.
    fake.userClicks({ chatId: 111, messageId: asked!.message_id, label: "✅ Approve" });
    await vi.waitFor(() => expect(existsSync(proof)).toBe(true), { timeout: 15_000 });
    await vi.waitFor(() => {
      const last = h.llm.requests.at(-1)!.messages;
      expect(last.at(-1)?.role).toBe("tool");
      expect(last.at(-2)?.tool_calls?.[0]?.function.arguments).toContain("child-ran");
    });
  });
});
