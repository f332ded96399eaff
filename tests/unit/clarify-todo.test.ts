/** The `clarify` and `todo` tools on their own: arguments, answers the model reads, refusals. */
import { describe, expect, it } from "vitest";
import { clarifyTool } from "../../agent/tools/clarify/index.js";
import { todoTool } from "../../agent/tools/todo/index.js";
import type { TodoItem, ToolContext, ToolOutput } from "../../agent/types.js";
import { silentLogger } from "../../core/logger.js";

function context(platform = "telegram", plans = new Map<string, TodoItem[]>()): ToolContext {
  return {
    signal: new AbortController().signal,
    origin: {
      sessionId: "s1",
      sessionKey: `${platform}:dm:111`,
      chat: { platform, chatId: "111" },
      chatType: "dm",
      userId: "111",
    },
    state: {
      searchSessions: async () => [],
      todo: {
        get: async (key) => plans.get(key) ?? [],
        set: async (key, items) => void plans.set(key, items),
      },
    },
    logger: silentLogger(),
    homeDir: "/nonexistent",
    progress: () => {},
  };
}

const run = async (tool: typeof todoTool, args: unknown, ctx: ToolContext): Promise<ToolOutput> => {
  const out = await tool.execute(tool.parameters.parse(args), ctx);
  return typeof out === "string" ? { content: out } : out;
};

describe("clarify", () => {
  it("ends the turn with the question and one button per distinct choice", async () => {
    const out = await run(clarifyTool, { question: "Which?", choices: ["A", "B", "A"] }, context());
    expect(out.stopTurn).toBe("Which?");
    expect(out.buttons).toEqual([[{ label: "A", data: "A" }], [{ label: "B", data: "B" }]]);
  });

  it("asks without buttons when there are no choices", async () => {
    const out = await run(clarifyTool, { question: "What name?" }, context());
    expect(out).toMatchObject({ stopTurn: "What name?" });
    expect(out.buttons).toBeUndefined();
  });

  it("refuses in a scheduled run: nobody is there to answer", async () => {
    const out = await run(clarifyTool, { question: "Which?" }, context("cron"));
    expect(out.isError).toBe(true);
    expect(out.stopTurn).toBeUndefined();
  });
});

describe("todo", () => {
  it("adds, updates, lists and clears one session's plan", async () => {
    const plans = new Map<string, TodoItem[]>();
    const ctx = context("telegram", plans);
    await run(todoTool, { action: "add", items: ["a", "b"] }, ctx);
    const updated = await run(todoTool, { action: "update", id: 2, status: "in_progress", text: "b!" }, ctx);
    expect(updated.content).toBe("Plan: 0 done, 2 open, 2 in all\n1. [ ] a\n2. [~] b!");
    await run(todoTool, { action: "add", items: ["c"] }, ctx);
    expect((await run(todoTool, { action: "list" }, ctx)).content).toContain("3. [ ] c");
    expect((await run(todoTool, { action: "clear" }, ctx)).content).toBe("The plan is cleared.");
    expect(plans.get("telegram:dm:111")).toEqual([]);
    expect((await run(todoTool, { action: "list" }, ctx)).content).toBe("The plan is empty.");
  });

  it("says what is missing: add without items, update of an unknown step or without a change", async () => {
    const ctx = context();
    expect((await run(todoTool, { action: "add" }, ctx)).content).toMatch(/add needs `items`/);
    await run(todoTool, { action: "add", items: ["a"] }, ctx);
    expect((await run(todoTool, { action: "update", id: 9, status: "done" }, ctx)).content).toMatch(
      /steps: 1\)/,
    );
    expect((await run(todoTool, { action: "update", id: 1 }, ctx)).content).toMatch(
      /needs `status` or `text`/,
    );
  });
});
