/**
 * `delegate_task` through the whole gateway on the embedded queue (API server, runner, agent loop,
 * the gateway's delegation service): children run as jobs with a fresh context and come back in task
 * order; the depth limit takes `delegate_task` away from grandchildren; /stop cancels the parent and
 * every child.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type FakeLlmRequest, type FakeLlmStep, messageText } from "../fakes/llm/index.js";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";
import { eventually } from "../helpers/herald-cluster.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

const isChild = (r: FakeLlmRequest) => messageText(r.messages[0]).includes("sub-agent");
const lastText = (r: FakeLlmRequest) => messageText(r.messages.at(-1));
const toolNames = (r: FakeLlmRequest) => (r.tools ?? []).map((t) => t.function.name);

/** Parent: delegates three tasks, then quotes the tool result. Children: answer after a delay. */
function delegatingModel(request: FakeLlmRequest): FakeLlmStep {
  const last = request.messages.at(-1);
  if (last?.role === "tool") return { text: `parent got:\n${messageText(last)}` };
  if (isChild(request)) {
    const goal = messageText(request.messages[1]);
    // The first task finishes last: the order of results is the order of tasks, not of finishing.
    const delayMs = goal.startsWith("task one") ? 300 : goal.startsWith("task two") ? 100 : 0;
    return { text: `result of ${goal.split("\n")[0]}`, delayMs };
  }
  return {
    toolCalls: [
      {
        name: "delegate_task",
        arguments: {
          tasks: [
            { goal: "task one", context: "the secret word is apricot" },
            { goal: "task two" },
            { goal: "task three", toolsets: ["core", "terminal-not-mine"] },
          ],
        },
      },
    ],
  };
}

describe("delegate_task", () => {
  it("runs three children with fresh contexts and returns their results in task order", async () => {
    harness = await startHarness();
    const h = harness;
    h.llm.setDefault(delegatingModel);
    const reply = await chat(h, "please split this work", { sessionId: "d-1" });
    expect(reply.status).toBe(200);
    const one = reply.text.indexOf("## Task 1: done");
    const two = reply.text.indexOf("## Task 2: done");
    const three = reply.text.indexOf("## Task 3: done");
    expect(one).toBeGreaterThan(-1);
    expect(two).toBeGreaterThan(one);
    expect(three).toBeGreaterThan(two);
    expect(reply.text).toContain("result of task one");
    expect(reply.text).toContain("result of task three");

    const children = h.llm.requests.filter(isChild);
    expect(children).toHaveLength(3);
    for (const child of children) {
      // A fresh context: the child prompt and its task, nothing of the parent's conversation.
      expect(child.messages.map((m) => m.role)).toEqual(["system", "user"]);
      expect(JSON.stringify(child.messages)).not.toContain("please split this work");
    }
    const first = children.find((c) => lastText(c).startsWith("task one"))!;
    expect(lastText(first)).toContain("the secret word is apricot");
    // Toolsets: never more than the parent's (the unknown one is dropped).
    const third = children.find((c) => lastText(c).startsWith("task three"))!;
    expect(toolNames(third)).toContain("session_search");
    expect(toolNames(third)).not.toContain("terminal");
    expect(toolNames(third)).not.toContain("delegate_task");
    // The chat's plan and questions are not the child's.
    expect(toolNames(third)).not.toContain("todo");
    expect(toolNames(third)).not.toContain("clarify");
    // The children's tokens count in the session's usage (/usage), once each.
    const usage = h.state.database
      .prepare("SELECT turn_id FROM usage WHERE turn_id IN (SELECT id FROM delegate_children)")
      .all();
    expect(usage).toHaveLength(3);
  });

  it("takes delegate_task away at depth 2 and refuses it there", async () => {
    harness = await startHarness();
    const h = harness;
    h.llm.setDefault((request) => {
      const last = request.messages.at(-1);
      if (last?.role === "tool") return { text: `got: ${messageText(last)}` };
      const goal = messageText(request.messages[1]);
      if (!isChild(request))
        return { toolCalls: [{ name: "delegate_task", arguments: { tasks: [{ goal: "level one" }] } }] };
      if (goal.startsWith("level one"))
        return { toolCalls: [{ name: "delegate_task", arguments: { tasks: [{ goal: "level two" }] } }] };
      // Depth 2 asks anyway.
      return { toolCalls: [{ name: "delegate_task", arguments: { tasks: [{ goal: "level three" }] } }] };
    });
    const reply = await chat(h, "go deep", { sessionId: "d-2" });
    expect(reply.status).toBe(200);
    const byGoal = (g: string) => h.llm.requests.find((r) => isChild(r) && messageText(r.messages[1]) === g)!;
    // Offered: its schema is sent, or its toolset is listed to load on demand (lean requests).
    const offers = (r: FakeLlmRequest) =>
      toolNames(r).includes("delegate_task") || messageText(r.messages[0]).includes("delegate_task");
    expect(offers(h.llm.requests[0]!)).toBe(true);
    expect(offers(byGoal("level one"))).toBe(true);
    expect(offers(byGoal("level two"))).toBe(false);
    expect(h.llm.requests.some((r) => isChild(r) && messageText(r.messages[1]) === "level three")).toBe(
      false,
    );
    // The grandchild's call was refused as an unknown tool; the answers travel back up.
    const grandchildEnd = h.llm.requests.find(
      (r) => isChild(r) && messageText(r.messages[1]) === "level two" && r.messages.at(-1)?.role === "tool",
    )!;
    expect(lastText(grandchildEnd)).toMatch(/error/i);
    expect(reply.text).toContain("## Task 1: done");
  });

  it("/stop cancels the parent and every child", async () => {
    harness = await startHarness();
    const h = harness;
    h.llm.setDefault((request) => {
      if (isChild(request)) return { text: "too late", delayMs: 60_000 };
      if (request.messages.at(-1)?.role === "tool") return { text: "parent finished" };
      return {
        toolCalls: [
          { name: "delegate_task", arguments: { tasks: [{ goal: "slow a" }, { goal: "slow b" }] } },
        ],
      };
    });
    const pending = chat(h, "start slow work", { sessionId: "d-3" });
    await eventually(
      () => h.llm.requests.filter(isChild).length === 2,
      () => `children did not start: ${h.llm.requests.length} requests`,
    );
    const stopped = await chat(h, "/stop", { sessionId: "d-3" });
    expect(stopped.text).toContain("Stopped");
    await eventually(
      () => h.llm.closedEarly.filter(isChild).length === 2,
      () => `children still running: ${h.llm.closedEarly.length} closed early`,
      10_000,
    );
    const rows = h.state.database.prepare("SELECT state FROM delegate_children").all() as { state: string }[];
    expect(rows.map((r) => r.state)).toEqual(["cancelled", "cancelled"]);
    const first = await pending;
    expect(first.text).not.toContain("parent finished");
    const stored = h.state.database.prepare("SELECT content FROM messages").all() as {
      content: string | null;
    }[];
    expect(stored.map((m) => m.content ?? "").join("\n")).not.toContain("parent finished");
  });

  it("a gateway crash mid-delegation: the parent runs again and finds its children, none doubled", async () => {
    harness = await startHarness();
    const h = harness;
    let twoAttempts = 0;
    h.llm.setDefault((request) => {
      const last = request.messages.at(-1);
      if (last?.role === "tool") return { text: `parent got:\n${messageText(last)}` };
      if (isChild(request)) {
        const goal = messageText(request.messages[1]);
        if (goal === "task two" && ++twoAttempts === 1) return { text: "never sent", delayMs: 30_000 };
        return { text: `result of ${goal}` };
      }
      return {
        toolCalls: [
          { name: "delegate_task", arguments: { tasks: [{ goal: "task one" }, { goal: "task two" }] } },
        ],
      };
    });
    void chat(h, "split it", { sessionId: "d-4" }).catch(() => undefined);
    const childRequests = (goal: string) =>
      h.llm.requests.filter((r) => isChild(r) && messageText(r.messages[1]) === goal).length;
    await eventually(
      () => childRequests("task one") === 1 && childRequests("task two") === 1,
      () => "children did not start",
    );
    const done = () =>
      (
        h.state.database.prepare("SELECT state FROM delegate_children ORDER BY id").all() as {
          state: string;
        }[]
      ).map((r) => r.state);
    await eventually(
      () => done()[0] === "done",
      () => `task one not done: ${done().join(", ")}`,
    );
    await h.crash();
    await h.start();
    await eventually(
      () => h.llm.requests.some((r) => !isChild(r) && r.messages.at(-1)?.role === "tool"),
      () => `the parent never got its result: ${done().join(", ")}`,
    );
    const final = h.llm.requests.find((r) => !isChild(r) && r.messages.at(-1)?.role === "tool")!;
    const result = messageText(final.messages.at(-1));
    expect(result.split("## Task 1: done"), result).toHaveLength(2);
    expect(result.split("## Task 2: done"), result).toHaveLength(2);
    // Task one finished before the crash and was not run again; task two ran again once.
    expect(childRequests("task one")).toBe(1);
    expect(childRequests("task two")).toBe(2);
    expect(done()).toEqual(["done", "done"]);
  });

  it("one slot is enough: a waiting parent lends its slot to its children (embedded queue)", async () => {
    harness = await startHarness({ env: { HERALD_CONCURRENCY: "1" } });
    const h = harness;
    h.llm.setDefault(delegatingModel);
    // Two chats delegate at once: two parents, three children each, one slot.
    const [a, b] = await Promise.all([
      chat(h, "split this", { sessionId: "d-5" }),
      chat(h, "split that", { sessionId: "d-6" }),
    ]);
    for (const reply of [a, b]) {
      expect(reply.text).toContain("## Task 1: done");
      expect(reply.text).toContain("## Task 3: done");
    }
    expect(h.llm.requests.filter(isChild)).toHaveLength(6);
  });
});
