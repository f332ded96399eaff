/**
 * `delegate_task` across `herald worker` processes on Redis: children spread over the workers (each
 * worker asks for its own model name, so the fake model tells who ran what), results come back in task
 * order, a worker killed while a child runs leaves exactly one result per task, and /stop cancels the
 * parent and every child on any worker.
 */
import { describe, expect, it } from "vitest";
import { type FakeLlmRequest, messageText } from "../fakes/llm/index.js";
import { clusterPerTest } from "../helpers/cluster-per-test.js";
import { eventually, type HeraldCluster } from "../helpers/herald-cluster.js";
import { redisPerFile } from "../helpers/redis.js";

const redis = redisPerFile();
const cluster = clusterPerTest(redis);

const isChild = (r: FakeLlmRequest) => messageText(r.messages[0]).includes("sub-agent");
const goalOf = (r: FakeLlmRequest) => messageText(r.messages[1]);

const start = () => cluster.startApiOnly({ lockDurationMs: 2_000 });

const delegateThree = {
  toolCalls: [
    {
      name: "delegate_task",
      arguments: { tasks: [{ goal: "task one" }, { goal: "task two" }, { goal: "task three" }] },
    },
  ],
};

type Row = { id: string; state: string; model: string | null };
const rows = (c: HeraldCluster) =>
  c.state().database.prepare("SELECT id, state, model FROM delegate_children ORDER BY id").all() as Row[];

describe("delegate_task on Redis workers", () => {
  it("spreads the children over both workers and returns the results in task order", async () => {
    const { c, model } = await start();
    model.setDefault((request) => {
      const last = request.messages.at(-1);
      if (last?.role === "tool") return { text: `parent got:\n${messageText(last)}` };
      // All three are in flight at once: each worker has two slots, the parent holds one.
      if (isChild(request)) return { text: `result of ${goalOf(request)}`, delayMs: 1_000 };
      return delegateThree;
    });
    await c.startWorker("wa", 2);
    await c.startWorker("wb", 2);
    const reply = await c.chat("split it", "r-1");
    const order = ["one", "two", "three"].map((n) => reply.indexOf(`result of task ${n}`));
    expect(
      order.every((i) => i > -1),
      `${reply}\n${c.output()}`,
    ).toBe(true);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    const ranOn = model.requests.filter(isChild).map((r) => r.model);
    expect(ranOn).toHaveLength(3);
    expect(new Set(ranOn)).toEqual(new Set(["wa", "wb"]));
    // The gateway recorded who answered each child.
    expect(new Set(rows(c).map((r) => r.model))).toEqual(new Set(["wa", "wb"]));
  });

  it("a worker killed while a child runs: the child runs elsewhere, one result per task", async () => {
    const { c, model } = await start();
    let firstTwo = true;
    model.setDefault((request) => {
      const last = request.messages.at(-1);
      if (last?.role === "tool") return { text: `parent got:\n${messageText(last)}` };
      if (isChild(request)) {
        if (goalOf(request) === "task two" && firstTwo) {
          firstTwo = false;
          return { text: "never sent", delayMs: 60_000 };
        }
        return { text: `result of ${goalOf(request)}`, delayMs: 100 };
      }
      return delegateThree;
    });
    const workers = [await c.startWorker("wa", 2), await c.startWorker("wb", 2)];
    const pending = c.chat("split it", "r-2");
    await eventually(
      () => model.requests.some((r) => isChild(r) && goalOf(r) === "task two"),
      () => `task two never started:\n${c.output()}`,
    );
    const hanging = model.requests.find((r) => isChild(r) && goalOf(r) === "task two")!;
    const victim = workers.find((w) => w.name === `worker ${hanging.model}`)!;
    await c.kill(victim);
    await c.startWorker("wc", 2);

    const reply = await pending;
    for (const n of [1, 2, 3]) expect(reply.split(`## Task ${n}: done`).length - 1, reply).toBe(1);
    expect(reply).toContain("result of task two");
    expect(rows(c).map((r) => r.state)).toEqual(["done", "done", "done"]);
    // Task two ran twice (the second time elsewhere); its result arrived once.
    const twos = model.requests.filter((r) => isChild(r) && goalOf(r) === "task two");
    expect(twos).toHaveLength(2);
    expect(twos[1]!.model).not.toBe(hanging.model);
  });

  it("/stop cancels the parent and every child on any worker", async () => {
    const { c, model } = await start();
    model.setDefault((request) => {
      if (isChild(request)) return { text: "too late", delayMs: 60_000 };
      if (request.messages.at(-1)?.role === "tool") return { text: "parent finished" };
      return delegateThree;
    });
    await c.startWorker("wa", 2);
    await c.startWorker("wb", 2);
    const pending = c.chat("start slow work", "r-3");
    await eventually(
      () => model.requests.filter(isChild).length === 3,
      () => `children did not start:\n${c.output()}`,
    );
    expect(await c.chat("/stop", "r-3")).toContain("Stopped");
    await eventually(
      () => model.closedEarly.filter(isChild).length === 3,
      () => `children still running (${model.closedEarly.length} closed):\n${c.output()}`,
      10_000,
    );
    expect(rows(c).map((r) => r.state)).toEqual(["cancelled", "cancelled", "cancelled"]);
    // The parent's turn ended cancelled: nothing of it reaches the user or the session (a model call it
    // may have started between its children's end and its own abort arriving is discarded).
    expect(await pending).not.toContain("parent finished");
    expect(c.answers("api:").join("\n")).not.toContain("parent finished");
  });
});
