/**
 * `delegate_task` on Redis workers with fewer job slots than delegating parents: a parent that waits
 * for its children lends its worker slot, so the children run even when every slot of every worker is
 * held by a waiting parent; the slot comes back afterwards (the worker runs one turn at a time again);
 * a child that delegates lends its slot too; the chat's next turn still waits for the delegating one;
 * /stop during the wait still cancels the children.
 */
import { describe, expect, it } from "vitest";
import { type FakeLlmRequest, messageText } from "../fakes/llm/index.js";
import { clusterPerTest } from "../helpers/cluster-per-test.js";
import { eventually, type HeraldCluster } from "../helpers/herald-cluster.js";
import { redisPerFile } from "../helpers/redis.js";

const redis = redisPerFile();
const cluster = clusterPerTest(redis);

/** The children's time budget: before the fix a child never started and failed after this. */
const CHILD_TIMEOUT_S = 15;

const isChild = (r: FakeLlmRequest) => messageText(r.messages[0]).includes("sub-agent");
const goalOf = (r: FakeLlmRequest) => messageText(r.messages[1]);

const start = () =>
  cluster.startApiOnly({
    lockDurationMs: 2_000,
    gatewayEnv: { HERALD_DELEGATE_TIMEOUT_S: String(CHILD_TIMEOUT_S) },
  });

const delegate = (...goals: string[]) => ({
  toolCalls: [{ name: "delegate_task", arguments: { tasks: goals.map((goal) => ({ goal })) } }],
});

type Row = { id: string; state: string };
const rows = (c: HeraldCluster) =>
  c.state().database.prepare("SELECT id, state FROM delegate_children ORDER BY id").all() as Row[];

/** When each model request arrived and when its answer went out, by the user text or goal it serves. */
interface Span {
  what: string;
  startedAt: number;
  endsAt: number;
}

describe("delegate_task on Redis, parents ≥ slots", { timeout: 60_000 }, () => {
  it("one worker of concurrency 1: the child starts while its parent waits", async () => {
    const { c, model } = await start();
    let parentWaitsSince = 0;
    let childStartedAt = 0;
    model.setDefault((request) => {
      const last = request.messages.at(-1);
      if (last?.role === "tool") return { text: `parent got:\n${messageText(last)}` };
      if (isChild(request)) {
        childStartedAt = Date.now();
        return { text: `result of ${goalOf(request)}` };
      }
      parentWaitsSince = Date.now();
      return delegate("task one");
    });
    await c.startWorker("wa", 1);
    const reply = await c.chat("split it", "s-1");
    // Before the fix the child never got the slot: it ran out of its time budget and the parent got a
    // failure (`## Task 1: failed … ran out of its time budget`), having held the only slot meanwhile.
    expect(reply, `${reply}\n${c.output()}`).toContain("## Task 1: done");
    expect(reply).toContain("result of task one");
    expect(childStartedAt - parentWaitsSince).toBeLessThan(5_000);
    expect(rows(c).map((r) => r.state)).toEqual(["done"]);
  });

  it("a parent with two children on a worker of concurrency 1 finishes, and the slot comes back", async () => {
    const { c, model } = await start();
    const spans: Span[] = [];
    model.setDefault((request) => {
      const last = request.messages.at(-1);
      if (last?.role === "tool") return { text: `parent got:\n${messageText(last)}` };
      if (isChild(request)) return { text: `result of ${goalOf(request)}`, delayMs: 300 };
      const text = messageText(last);
      if (text.startsWith("plain")) {
        spans.push({ what: text, startedAt: Date.now(), endsAt: Date.now() + 800 });
        return { text: `answer to ${text}`, delayMs: 800 };
      }
      return delegate("task one", "task two");
    });
    await c.startWorker("wa", 1);
    const reply = await c.chat("split it", "s-2");
    expect(reply, `${reply}\n${c.output()}`).toContain("## Task 1: done");
    expect(reply).toContain("## Task 2: done");
    expect(reply).toContain("result of task one");
    expect(reply).toContain("result of task two");
    expect(model.requests.filter(isChild)).toHaveLength(2);
    expect(rows(c).map((r) => r.state)).toEqual(["done", "done"]);

    // The lent slot was given back: two turns of two chats run one after the other again.
    const [a, b] = await Promise.all([c.chat("plain a", "s-3"), c.chat("plain b", "s-4")]);
    expect(a).toContain("answer to plain a");
    expect(b).toContain("answer to plain b");
    const [first, second] = [...spans].sort((x, y) => x.startedAt - y.startedAt);
    expect(second!.startedAt, JSON.stringify(spans)).toBeGreaterThanOrEqual(first!.endsAt - 50);
  });

  it("more parents than slots in the cluster: every parent gets its children's results", async () => {
    const { c, model } = await start();
    model.setDefault((request) => {
      const last = request.messages.at(-1);
      if (last?.role === "tool") return { text: `parent got:\n${messageText(last)}` };
      if (isChild(request)) return { text: `result of ${goalOf(request)}`, delayMs: 200 };
      const text = messageText(last);
      return delegate(`${text} one`, `${text} two`);
    });
    // Two workers of one slot each, three chats delegating at once.
    await c.startWorker("wa", 1);
    await c.startWorker("wb", 1);
    const replies = await Promise.all(["x", "y", "z"].map((n) => c.chat(n, `s-5${n}`)));
    for (const [i, n] of ["x", "y", "z"].entries()) {
      expect(replies[i], `${replies[i]}\n${c.output()}`).toContain(`result of ${n} one`);
      expect(replies[i]).toContain(`result of ${n} two`);
    }
    expect(rows(c).map((r) => r.state)).toEqual(Array(6).fill("done"));
  });

  it("a child that delegates in turn lends its slot too: grandchildren run on one slot", async () => {
    const { c, model } = await start();
    model.setDefault((request) => {
      const last = request.messages.at(-1);
      const child = isChild(request);
      if (last?.role === "tool") return { text: `${child ? "child" : "parent"} got:\n${messageText(last)}` };
      if (child && goalOf(request) === "task one") return delegate("sub one");
      if (child) return { text: `result of ${goalOf(request)}` };
      return delegate("task one");
    });
    await c.startWorker("wa", 1);
    const reply = await c.chat("split it deeply", "s-7");
    expect(reply, `${reply}\n${c.output()}`).toContain("child got:");
    expect(reply).toContain("result of sub one");
    expect(rows(c).map((r) => r.state)).toEqual(["done", "done"]);
  });

  it("the chat's next message still waits for the delegating turn, though its slot is lent", async () => {
    const { c, model } = await start();
    const order: string[] = [];
    model.setDefault((request) => {
      const last = request.messages.at(-1);
      if (last?.role === "tool") {
        order.push("parent resumed");
        return { text: "parent done" };
      }
      if (isChild(request)) {
        order.push("child");
        return { text: `result of ${goalOf(request)}`, delayMs: 1_500 };
      }
      const text = messageText(last);
      order.push(text);
      return text === "second" ? { text: "second done" } : delegate("task one");
    });
    await c.startWorker("wa", 1);
    const first = c.chat("first", "s-8");
    first.catch(() => undefined);
    await eventually(
      () => order.includes("child"),
      () => `the child never started:\n${c.output()}`,
    );
    // The parent waits and its slot is lent; the chat's next turn still comes after it (the gateway
    // holds it back, and the queue's orderingKey would too: see the JobQueue contract suite).
    const second = await c.chat("second", "s-8");
    expect(await first).toContain("parent done");
    expect(second).toContain("second done");
    expect(order).toEqual(["first", "child", "parent resumed", "second"]);
  });

  it("/stop while the parent waits cancels its children, running or queued", async () => {
    const { c, model } = await start();
    model.setDefault((request) => {
      if (isChild(request)) return { text: "too late", delayMs: 60_000 };
      const last = request.messages.at(-1);
      if (last?.role === "tool") return { text: "parent finished" };
      if (messageText(last) === "hello") return { text: "hello back" };
      return delegate("task one", "task two");
    });
    await c.startWorker("wa", 1);
    const pending = c.chat("start slow work", "s-6");
    // Awaited below; a failed case stops the cluster under it, which must not be an unhandled rejection.
    pending.catch(() => undefined);
    // The first child runs in the parent's lent slot; the second waits for a slot.
    await eventually(
      () => model.requests.filter(isChild).length === 1,
      () => `no child started while the parent waited:\n${c.output()}`,
      CHILD_TIMEOUT_S * 1_000 - 3_000,
    );
    expect(await c.chat("/stop", "s-6")).toContain("Stopped");
    await eventually(
      () => model.closedEarly.filter(isChild).length === 1,
      () => `the running child was not stopped:\n${c.output()}`,
      10_000,
    );
    expect(rows(c).map((r) => r.state)).toEqual(["cancelled", "cancelled"]);
    expect(await pending).not.toContain("parent finished");
    // The queued child never ran, and the worker takes the chat's next message.
    expect(await c.chat("hello", "s-6")).toContain("hello back");
    expect(model.requests.filter(isChild)).toHaveLength(1);
  });
});
