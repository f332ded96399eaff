/**
 * Buttons, clarify, todo and approvals across processes on Redis: the turn runs in a `herald worker`
 * process, the reply's buttons travel in its result through the queue to the gateway's outbox and
 * Telegram; the click's turn runs on the worker again; the worker's `todo` plan is kept on the gateway
 * (state API), where `/todo` shows it; a command held for approval is kept on the gateway with its
 * call, and the Approve click's turn runs it on the worker and hands the model its output.
 */
import { describe, expect, it } from "vitest";
import { type FakeLlmRequest, messageText } from "../fakes/llm/index.js";
import { clusterPerTest } from "../helpers/cluster-per-test.js";
import { eventually } from "../helpers/herald-cluster.js";
import { redisPerFile } from "../helpers/redis.js";

const redis = redisPerFile();
const cluster = clusterPerTest(redis);

const command = (text: string) => ({ entities: [{ type: "bot_command", offset: 0, length: text.length }] });
type Keyboard = { inline_keyboard: { text: string }[][] } | undefined;

/** The fake model: plans and asks which colour; the answer's turn reports it. */
function model(request: FakeLlmRequest) {
  const last = request.messages.at(-1);
  const text = messageText(last);
  if (last?.role === "tool") {
    return text.includes("Asked the user")
      ? { text: "unused" }
      : {
          toolCalls: [
            { name: "clarify", arguments: { question: "Which colour?", choices: ["Red", "Blue"] } },
          ],
        };
  }
  if (text.startsWith("paint"))
    return { toolCalls: [{ name: "todo", arguments: { action: "add", items: ["pick a colour", "paint"] } }] };
  return { text: `painting it ${text}` };
}

describe("buttons on Redis", () => {
  it("a worker's clarify reaches Telegram with its keyboard; the click's turn runs on the worker; /todo shows its plan", async () => {
    const { c, tg, model: llm } = await cluster.start();
    llm.setDefault(model);
    await c.startWorker();

    tg.userSends({ chatId: 111, fromId: 111, text: "paint the fence" });
    const prompt = () => tg.botMessages(111).find((m) => (m["reply_markup"] as Keyboard) !== undefined);
    await eventually(
      () => prompt() !== undefined,
      () => `no prompt:\n${c.output()}`,
    );
    expect(prompt()!.text).toBe("Which colour?");
    const keyboard = prompt()!["reply_markup"] as Keyboard;
    expect(keyboard!.inline_keyboard.flat().map((b) => b.text)).toEqual(["Red", "Blue"]);

    tg.userClicks({ chatId: 111, messageId: prompt()!.message_id, label: "Blue" });
    const said = () => tg.botMessages(111).map((m) => m.text ?? "");
    await eventually(
      () => said().includes("painting it Blue"),
      () => `no answer:\n${c.output()}`,
    );

    tg.userSends({ chatId: 111, fromId: 111, text: "/todo", extra: command("/todo") });
    await eventually(
      () => said().some((t) => t.includes("1. [ ] pick a colour")),
      () => said().join("\n"),
    );
    expect(said().find((t) => t.includes("pick a colour"))).toContain("2. [ ] paint");
  }, 60_000);

  it("a worker's command held for approval: the Approve click runs it on the worker, and the model gets its output", async () => {
    const { c, tg, model: llm } = await cluster.start();
    const command = "chattr -i nothing 2>/dev/null; echo approved-run >> proof.txt; cat proof.txt";
    llm.setDefault((request) => {
      const last = request.messages.at(-1);
      if (last?.role === "tool") return { text: `tool said: ${messageText(last)}` };
      return { toolCalls: [{ name: "terminal", arguments: { command } }] };
    });
    await c.startWorker("fake-model", 1, { env: { HERALD_EXEC_BACKEND: "local" } });

    tg.userSends({ chatId: 111, fromId: 111, text: "tidy the attributes" });
    const prompt = () => tg.botMessages(111).find((m) => (m["reply_markup"] as Keyboard) !== undefined);
    await eventually(
      () => prompt() !== undefined,
      () => `no prompt:\n${c.output()}`,
    );
    expect(prompt()!.text).toContain("needs your approval");
    tg.userClicks({ chatId: 111, messageId: prompt()!.message_id, label: "✅ Approve" });
    const said = () => tg.botMessages(111).map((m) => m.text ?? "");
    await eventually(
      () => said().some((t) => t.startsWith("tool said:")),
      () => `no answer:\n${c.output()}`,
    );
    expect(
      said()
        .find((t) => t.startsWith("tool said:"))!
        .match(/approved-run/g),
    ).toHaveLength(1);
    const next = llm.requests.at(-1)!.messages;
    expect(next.at(-1)?.role).toBe("tool");
    expect(JSON.stringify(next)).not.toContain("Run it now");
    expect(said().filter((t) => t.includes("needs your approval"))).toHaveLength(1);
  }, 60_000);
});
