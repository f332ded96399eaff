/**
 * The `todo` tool and `/todo` through the whole gateway (API server, runner, agent loop): the plan is
 * kept per session outside the history, so a compaction does not lose it (the model is shown it once
 * the calls that made it were summarised) and neither does a restart; `/todo` shows it to the user.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type FakeLlmRequest, messageText } from "../fakes/llm/index.js";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

const isSummary = (r: FakeLlmRequest) =>
  messageText(r.messages.at(-1)).includes("Summarise this conversation");

/** The fake model: plans when asked, marks step 1 done, lists the plan; summaries and "ok" otherwise. */
function planningModel(request: FakeLlmRequest) {
  const last = request.messages.at(-1);
  const text = messageText(last);
  if (last?.role === "tool") return { text: `plan says:\n${text}` };
  if (isSummary(request)) return { text: "Summary: the user is writing a book." };
  if (text.startsWith("make a plan"))
    return {
      toolCalls: [
        { name: "todo", arguments: { action: "add", items: ["outline the book", "draft chapter one"] } },
      ],
    };
  if (text.startsWith("outline done"))
    return { toolCalls: [{ name: "todo", arguments: { action: "update", id: 1, status: "done" } }] };
  if (text.startsWith("what is the plan"))
    return { toolCalls: [{ name: "todo", arguments: { action: "list" } }] };
  return { text: "ok" };
}

async function say(h: Harness, text: string): Promise<string> {
  const reply = await chat(h, text, { sessionId: "todo-1" });
  expect(reply.status).toBe(200);
  return reply.text;
}

describe("todo", () => {
  it("keeps the plan across a compaction and a restart; /todo shows it", async () => {
    // A 2,000-token window compresses every few padded messages.
    harness = await startHarness({ env: { HERALD_CONTEXT_TOKENS: "2000" } });
    const h = harness;
    h.llm.setDefault(planningModel);
    expect(await say(h, "/todo")).toBe("No plan yet in this conversation.");
    expect(await say(h, "make a plan for my book")).toContain("1. [ ] outline the book");
    expect(await say(h, "outline done")).toContain("1. [x] outline the book\n2. [ ] draft chapter one");

    for (let i = 0; i < 20 && !h.llm.requests.some(isSummary); i++)
      await say(h, `chapter notes ${i}: ${"padding ".repeat(150)}`);
    expect(h.llm.requests.some(isSummary)).toBe(true);
    await say(h, "carry on");
    // The todo calls were summarised away: the model is shown the plan itself.
    const after = h.llm.requests.at(-1)!.messages.map((m) => messageText(m));
    expect(after.some((t) => t.includes("todo"))).toBe(true);
    expect(after.join("\n")).toContain("1. [done] outline the book\n2. [pending] draft chapter one");

    const shown = await say(h, "/todo");
    expect(shown).toContain("1 done, 1 open");
    expect(shown).toContain("2. [ ] draft chapter one");

    await h.restart();
    h.llm.setDefault(planningModel);
    expect(await say(h, "/todo")).toBe(shown);
    expect(await say(h, "what is the plan now?")).toContain(
      "1. [x] outline the book\n2. [ ] draft chapter one",
    );
  });

  it("a new session starts without the old plan", async () => {
    harness = await startHarness();
    const h = harness;
    h.llm.setDefault(planningModel);
    await say(h, "make a plan");
    expect(await say(h, "/new")).toBeTruthy();
    expect(await say(h, "/todo")).toBe("No plan yet in this conversation.");
  });
});
