/**
 * The gateway's delegation service on a real `state.db` and the real embedded queue (the handler
 * stands in for the agent): `max_parallel` caps the children in flight, a child past its time budget
 * is cancelled and reported, the same tasks of the same parent are one group, and the depth limit.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DelegationService } from "../../agent/delegate/service.js";
import type { DelegateGroup, DelegateParent } from "../../agent/delegate/state.js";
import { EmbeddedJobQueue } from "../../agent/queue/embedded-job-queue.js";
import { silentLogger } from "../../core/logger.js";
import type { TurnJob } from "../../core/turn.js";
import { SqliteState } from "../../sessions/sqlite-state.js";

let home: string;
let state: SqliteState;
let queue: EmbeddedJobQueue;
let service: DelegationService;

const parent: DelegateParent = {
  turnId: "tparent",
  callId: "call_1",
  origin: {
    sessionId: "s1",
    sessionKey: "api:dm:x",
    chat: { platform: "api", chatId: "x" },
    chatType: "dm",
    userId: "u",
  },
  toolsets: ["core", "delegate", "files"],
  depth: 0,
};

function setUp(handler: (job: TurnJob, signal: AbortSignal) => Promise<string>, timeoutMs = 60_000) {
  queue = new EmbeddedJobQueue({ logger: silentLogger() });
  service = new DelegationService({
    db: state.database,
    queue,
    logger: silentLogger(),
    settings: { maxDepth: 2, maxParallel: 3, maxIterations: 5, timeoutMs },
  });
  queue.subscribe(service.onQueueEvent);
  return queue.consume(
    async (job, ctx) => ({
      kind: "ok",
      turnId: job.turnId,
      messages: [],
      reply: { text: await handler(job, ctx.signal) },
      usage: { promptTokens: 0, completionTokens: 0, modelCalls: 1, toolCalls: 0 },
      model: "stub",
    }),
    { concurrency: 10 },
  );
}

async function settle(group: DelegateGroup): Promise<DelegateGroup> {
  let g = group;
  while (!g.children.every((c) => ["done", "failed", "cancelled"].includes(c.state)))
    g = await service.wait(g.id, g.version, 5_000);
  return g;
}

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "herald-delegation-"));
  state = SqliteState.open(join(home, "state.db"));
});
afterEach(async () => {
  service?.close();
  await queue?.close();
  state.close();
  rmSync(home, { recursive: true, force: true });
});

describe("DelegationService", () => {
  it("runs at most max_parallel children at once and answers in task order", async () => {
    let inFlight = 0;
    let most = 0;
    const jobs: TurnJob[] = [];
    await setUp(async (job) => {
      jobs.push(job);
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, 20));
      inFlight--;
      return `did ${job.input.text}`;
    });
    const tasks = ["a", "b", "c", "d", "e"].map((goal) => ({ goal, toolsets: ["files", "web"] }));
    const group = await settle(await service.start(parent, tasks, 2));
    expect(most).toBe(2);
    expect(group.children.map((c) => c.summary)).toEqual(["did a", "did b", "did c", "did d", "did e"]);
    // Fresh context, the asked toolsets the parent has, the depth and the step budget.
    expect(jobs[0]).toMatchObject({ history: [], toolsets: ["files"], maxIterations: 5 });
    expect(jobs[0]?.delegation).toEqual({ parentTurnId: "tparent", depth: 1 });
    // The same parent asking for the same tasks (a run after a crash) gets the same group, nothing new.
    const again = await service.start({ ...parent, callId: "call_other" }, tasks, 2);
    expect(again.id).toBe(group.id);
    expect(jobs).toHaveLength(5);
  });

  it("cancels a child past its time budget and says so", async () => {
    let aborted = 0;
    await setUp(
      (job, signal) =>
        job.input.text === "slow"
          ? new Promise((_, reject) =>
              signal.addEventListener("abort", () => {
                aborted++;
                reject(signal.reason);
              }),
            )
          : Promise.resolve("quick"),
      150,
    );
    const group = await settle(await service.start(parent, [{ goal: "slow" }, { goal: "fast" }]));
    expect(group.children.map((c) => c.state)).toEqual(["failed", "done"]);
    expect(group.children[0]?.summary).toContain("ran out of its time budget");
    expect(aborted).toBe(1);
  });

  it("gives no delegate toolset at the depth limit and refuses a call from there", async () => {
    const jobs: TurnJob[] = [];
    await setUp(async (job) => {
      jobs.push(job);
      return "ok";
    });
    await settle(await service.start({ ...parent, depth: 1 }, [{ goal: "deep" }]));
    expect(jobs[0]?.toolsets).toEqual(["core", "files"]);
    await expect(service.start({ ...parent, turnId: "t2", depth: 2 }, [{ goal: "deeper" }])).rejects.toThrow(
      /refused at depth 2.*delegation.max_depth/,
    );
  });
});
