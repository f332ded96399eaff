/**
 * The task board across processes on Redis: four `herald worker` processes each run a turn whose model
 * claims 50 times at once (200 claims on 100 tasks) and every task is claimed exactly once; a worker
 * killed while its turn holds a claim leaves the task claimable again once the claim expires. The board
 * is filled and read as a worker's tools reach it: over the gateway's state API.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { TaskBoardStateApi } from "../../agent/tools/task-board/state.js";
import { createHttpStateClient } from "../../app/state-client.js";
import { silentLogger } from "../../core/logger.js";
import { type FakeLlm, type FakeLlmRequest, messageText, startFakeLlm } from "../fakes/llm/index.js";
import { eventually, HeraldCluster } from "../helpers/herald-cluster.js";
import { redisPerFile } from "../helpers/redis.js";

const redis = redisPerFile();
let llm: FakeLlm | undefined;
let cluster: HeraldCluster | undefined;

afterEach(async () => {
  await cluster?.stop();
  await llm?.close();
  cluster = undefined;
  llm = undefined;
});

async function start(gatewayEnv: Record<string, string> = {}): Promise<{ c: HeraldCluster; model: FakeLlm }> {
  llm = await startFakeLlm();
  cluster = new HeraldCluster({ redisUrl: redis.url, llmUrl: llm.url, lockDurationMs: 2_000, gatewayEnv });
  await cluster.startGateway();
  return { c: cluster, model: llm };
}

function board(c: HeraldCluster): TaskBoardStateApi {
  const client = createHttpStateClient({ url: c.url, key: c.key, logger: silentLogger() });
  return client.taskBoard!;
}

function chat(c: HeraldCluster, text: string, sessionId: string): Promise<Response> {
  return fetch(`${c.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-herald-session-id": sessionId },
    body: JSON.stringify({ model: "herald", messages: [{ role: "user", content: text }] }),
  });
}

const claimCall = { name: "task_board", arguments: { action: "claim" } };
const toolResults = (r: FakeLlmRequest) => r.messages.filter((m) => m.role === "tool").map(messageText);

describe("task board on Redis workers", () => {
  it("4 workers × 50 claims on 100 tasks: each task is claimed exactly once", {
    timeout: 120_000,
  }, async () => {
    const { c, model } = await start();
    const api = board(c);
    for (let i = 1; i <= 100; i++) await api.create({ title: `task ${i}` }, { owner: "test" });
    model.setDefault((request) => {
      if (request.messages.at(-1)?.role === "tool") return { text: "claimed my share" };
      // Held a moment, so all four turns are in flight (one per worker) before any claims.
      return { toolCalls: Array.from({ length: 50 }, () => claimCall), delayMs: 1_500 };
    });
    for (const name of ["wa", "wb", "wc", "wd"]) await c.startWorker(name, 1);
    const answers = await Promise.all([1, 2, 3, 4].map((n) => chat(c, "claim fifty", `tb-${n}`)));
    for (const a of answers) expect(a.status).toBe(200);

    const finals = model.requests.filter((r) => r.messages.at(-1)?.role === "tool");
    expect(finals).toHaveLength(4);
    // One turn per worker: the race was between four processes.
    expect(new Set(finals.map((r) => r.model))).toEqual(new Set(["wa", "wb", "wc", "wd"]));
    const results = finals.flatMap(toolResults);
    expect(results).toHaveLength(200);
    const claimed = results.map((t) => /^Claimed #(\d+)/.exec(t)?.[1]).filter((id) => id !== undefined);
    expect(claimed).toHaveLength(100);
    expect(new Set(claimed).size).toBe(100);
    expect(results.filter((t) => t === "No free task on the board.")).toHaveLength(100);
    const tasks = await api.list({ limit: 1000 });
    expect(tasks.every((t) => t.state === "claimed" || t.state === "todo")).toBe(true);
  });

  it("a killed worker's claim expires and the task is claimed again", { timeout: 60_000 }, async () => {
    const { c, model } = await start({ HERALD_TASK_CLAIM_TTL_S: "1" });
    const api = board(c);
    const task = await api.create({ title: "write the report", details: "two pages" }, { owner: "cron" });
    model.setDefault((request) => {
      const last = request.messages.at(-1);
      // The turn claims, then works on it for a long time.
      if (last?.role === "tool") return { text: "never sent", delayMs: 60_000 };
      return { toolCalls: [claimCall] };
    });
    const worker = await c.startWorker("wa", 1);
    void chat(c, "take a task", "tb-kill").catch(() => undefined);
    await eventually(
      () => model.requests.some((r) => r.messages.at(-1)?.role === "tool"),
      () => `the turn never claimed:\n${c.output()}`,
    );
    const held = model.requests.find((r) => r.messages.at(-1)?.role === "tool")!;
    expect(messageText(held.messages.at(-1))).toMatch(new RegExp(`^Claimed #${task.id} `));
    // Another worker's turn finds nothing while the claim holds.
    expect(await api.claim({ owner: "other", turnId: "t-other" })).toBeUndefined();
    await c.kill(worker);

    // No worker runs the killed turn again here: only the claim's expiry frees the task.
    let again: Awaited<ReturnType<TaskBoardStateApi["claim"]>>;
    for (let i = 0; i < 300 && !again; i++) {
      again = await api.claim({ owner: "other", turnId: "t-other" });
      if (!again) await new Promise((r) => setTimeout(r, 100));
    }
    expect(again?.id).toBe(task.id);
    expect(again?.owner).toBe("other");
    const done = await api.complete(task.id, "done", "report written", { owner: "other", turnId: "t-other" });
    expect(done.state).toBe("done");
  });
});
