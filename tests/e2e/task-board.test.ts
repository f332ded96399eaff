/**
 * The task board through the whole gateway on the embedded queue: a cron job's run feeds it (the
 * `task_board` tool in a scheduled turn), `herald tasks` shows what it added, and a turn stopped while it
 * holds a claim gives the task back at once (its journal turn is cancelled).
 */
import { Command } from "commander";
import { afterEach, describe, expect, it } from "vitest";
import { registerTaskBoardCommands as registerTasksCommands } from "../../app/cli/task-board.js";
import { loadConfig } from "../../app/config.js";
import { type FakeLlmRequest, messageText } from "../fakes/llm/index.js";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";
import { eventually } from "../helpers/herald-cluster.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

const lastText = (r: FakeLlmRequest) => messageText(r.messages.at(-1));

async function tasksCli(home: string, ...args: string[]): Promise<string> {
  const out: string[] = [];
  const program = new Command().exitOverride();
  registerTasksCommands(program, {
    config: () => loadConfig({ env: { HERALD_HOME: home } }),
    out: (t) => out.push(t),
    err: () => undefined,
  });
  await program.parseAsync(["tasks", ...args], { from: "user" });
  return out.join("");
}

describe("task board", () => {
  it("a cron job feeds the board; herald tasks lists what it added", async () => {
    harness = await startHarness();
    const h = harness;
    h.llm.setDefault((request) => {
      if (request.messages.at(-1)?.role === "tool") return { text: "[SILENT]" };
      if (lastText(request).includes("Feed the board"))
        return {
          toolCalls: [
            {
              name: "task_board",
              arguments: { action: "create", title: "triage inbox", details: "label all" },
            },
            { name: "task_board", arguments: { action: "create", title: "renew certificate" } },
          ],
        };
      return { text: "ok" };
    });
    const caller = { chat: { platform: "api", chatId: "owner" }, userId: "owner" };
    const job = await h.gateway.cron.api.create(
      {
        schedule: "every 24h",
        prompt: "Feed the board with today's chores.",
        deliver: "local",
        name: "chores",
      },
      caller,
    );
    await h.gateway.cron.api.runNow(job.id, caller);
    const board = await eventuallyList(h, 2);
    expect(board.map((t) => t.title)).toEqual(["triage inbox", "renew certificate"]);
    expect(board.every((t) => t.state === "todo")).toBe(true);
    expect(await tasksCli(h.homeDir, "list")).toBe("#1 [todo] triage inbox\n#2 [todo] renew certificate\n");
    expect(await tasksCli(h.homeDir, "show", "1")).toContain("details: label all");
  });

  it("a turn stopped while it holds a claim gives the task back at once", async () => {
    harness = await startHarness();
    const h = harness;
    h.llm.setDefault((request) => {
      if (request.messages.at(-1)?.role === "tool") return { text: "working on it", delayMs: 60_000 };
      return { toolCalls: [{ name: "task_board", arguments: { action: "claim" } }] };
    });
    const board = h.gateway.delegation.stateApis.taskBoard;
    expect(await board.create({ title: "ship the release" }, { owner: "owner" })).toMatchObject({ id: 1 });
    const pending = chat(h, "take a task", { sessionId: "tb-1" });
    await eventually(
      () => h.llm.requests.some((r) => r.messages.at(-1)?.role === "tool"),
      () => "the turn never claimed",
    );
    expect(await tasksCli(h.homeDir, "show", "1")).toMatch(/^#1 \[claimed by api:/);
    expect(await board.claim({ owner: "someone else", turnId: "t-other" })).toBeUndefined();
    expect((await chat(h, "/stop", { sessionId: "tb-1" })).text).toContain("Stopped");
    await pending;
    // Claimable at once: no lease had to run out (it lasts 15 minutes).
    const again = await board.claim({ owner: "someone else", turnId: "t-other" });
    expect(again).toMatchObject({ id: 1, owner: "someone else" });
  });
});

async function eventuallyList(h: Harness, count: number) {
  const api = h.gateway.delegation.stateApis.taskBoard;
  let tasks = await api.list();
  for (let i = 0; i < 200 && tasks.length < count; i++) {
    await new Promise((r) => setTimeout(r, 25));
    tasks = await api.list();
  }
  return tasks;
}
