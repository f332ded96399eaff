/**
 * A session's workspace follows it across workers on Redis, through real `herald gateway` and two
 * `herald worker` processes, each with its own HERALD_HOME (nothing shared but the gateway): a file
 * the agent wrote in a turn on worker A is there in the next turn on worker B after A was killed; a
 * worker killed mid-turn loses only that turn's writes; a background process started on A, asked for
 * from B, is answered with where it runs and that B cannot reach it.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { FakeLlmRequest } from "../fakes/llm/index.js";
import { clusterPerTest, lastUser } from "../helpers/cluster-per-test.js";
import { eventually, type HeraldCluster } from "../helpers/herald-cluster.js";
import { redisPerFile } from "../helpers/redis.js";
import { uniqueSleep } from "./exec-contract.js";

const redis = redisPerFile();
const cluster = clusterPerTest(redis);

/** The content of the last tool result of the request, if the turn has one. */
function lastToolResult(request: FakeLlmRequest): string | undefined {
  const tools = request.messages.filter((m) => m.role === "tool");
  const last = tools[tools.length - 1];
  return last ? String(last.content) : undefined;
}

/** Each user message runs `commands[text]` in the terminal, then answers with its output. */
function scripted(commands: Record<string, { command: string; background?: boolean } | string>) {
  return (request: FakeLlmRequest) => {
    const text = lastUser(request.messages);
    const result = lastToolResult(request);
    const turnStart = request.messages[request.messages.length - 1]?.role === "user";
    const step = commands[text];
    if (turnStart && step !== undefined) {
      if (typeof step === "string") {
        const id = /p_[0-9a-f]+@[A-Za-z0-9.-]+/.exec(JSON.stringify(request.messages))?.[0] ?? "none";
        return { toolCalls: [{ name: "process", arguments: { action: step, id } }] };
      }
      return { toolCalls: [{ name: "terminal", arguments: step }] };
    }
    return { text: `[${request.model}] ${result ?? `echo: ${text}`}` };
  };
}

/**
 * The latest generation the gateway holds of any workspace. A turn's streamed answer reaches the chat
 * before its worker has handed the workspace over (the turn is unfinished until then), so a test that
 * kills the worker waits for the turn to be stored first.
 */
function generation(c: HeraldCluster): number {
  const row = c.state().database.prepare("SELECT max(generation) AS g FROM workspace_generations").get() as {
    g: number | null;
  };
  return row.g ?? 0;
}

describe("workspace hand-over between workers", () => {
  it("a file written on worker A is read back on worker B after A was killed", async () => {
    const { c, tg, model } = await cluster.start();
    model.setDefault(
      scripted({
        "write it": { command: "mkdir -p notes && echo handed-over-42 > notes/today.md && echo written" },
        "read it": { command: "cat notes/today.md" },
      }),
    );
    const a = await c.startWorker("model-a");
    tg.userSends({ chatId: 111, fromId: 111, text: "write it" });
    await eventually(
      () =>
        tg
          .botMessages(111)
          .some((m) => Boolean(m.text?.includes("[model-a]") && m.text?.includes("written"))),
      () => `no answer from A:\n${c.output()}`,
    );
    // The turn is stored once its worker handed the workspace over and the queue took the result.
    await eventually(
      () => c.answers("telegram:").some((a) => a.includes("[model-a]")),
      () => `A's turn was not stored:\n${c.output()}`,
    );
    expect(generation(c)).toBe(1);
    await c.kill(a);
    await c.startWorker("model-b");
    tg.userSends({ chatId: 111, fromId: 111, text: "read it" });
    await eventually(
      () => tg.botMessages(111).some((m) => m.text?.includes("[model-b]")),
      () => `no answer from B:\n${c.output()}`,
    );
    const reply = tg.botMessages(111).find((m) => m.text?.includes("[model-b]"))?.text ?? "";
    expect(reply, c.output()).toContain("handed-over-42");
    // The gateway holds the generation; worker B's own HERALD_HOME now has the file.
    expect(existsSync(join(c.home, "workspace-store"))).toBe(true);
  }, 180_000);

  it("a worker killed mid-turn loses that turn's writes only", async () => {
    const { c, tg, model } = await cluster.start({ lockDurationMs: 3_000 });
    const marker = uniqueSleep();
    model.setDefault((request) => {
      const text = lastUser(request.messages);
      const result = lastToolResult(request);
      const turnStart = request.messages[request.messages.length - 1]?.role === "user";
      if (turnStart && text === "keep this")
        return { toolCalls: [{ name: "terminal", arguments: { command: "echo kept > kept.txt" } }] };
      if (turnStart && text === "then this" && request.model === "model-a")
        return {
          toolCalls: [{ name: "terminal", arguments: { command: `echo lost > lost.txt; sleep ${marker}` } }],
        };
      if (turnStart && text === "then this")
        return { toolCalls: [{ name: "terminal", arguments: { command: "ls" } }] };
      return { text: `[${request.model}] ${result ?? "?"}` };
    });
    const a = await c.startWorker("model-a");
    tg.userSends({ chatId: 111, fromId: 111, text: "keep this" });
    await eventually(
      () => tg.botMessages(111).some((m) => m.text?.includes("[model-a]")),
      () => `no answer from A:\n${c.output()}`,
    );
    await eventually(
      () => c.answers("telegram:").some((a) => a.includes("[model-a]")),
      () => `A's turn was not stored:\n${c.output()}`,
    );
    expect(generation(c)).toBe(1);
    tg.userSends({ chatId: 111, fromId: 111, text: "then this" });
    await eventually(
      () =>
        model.requests.some((r) => r.model === "model-a" && JSON.stringify(r.messages).includes("then this")),
      () => `A did not start the second turn:\n${c.output()}`,
    );
    await new Promise((r) => setTimeout(r, 1_000)); // the command runs (lost.txt is written on A)
    const aHome = join(c.home, "worker-1", "workspaces");
    const [wsA] = readdirSync(aHome).filter((n) => !n.startsWith("."));
    expect(existsSync(join(aHome, wsA ?? "", "lost.txt"))).toBe(true);
    await c.kill(a);
    await c.startWorker("model-b");
    await eventually(
      () => tg.botMessages(111).some((m) => m.text?.includes("[model-b]")),
      () => `B did not run the turn A left:\n${c.output()}`,
      60_000,
    );
    const listing = tg.botMessages(111).find((m) => m.text?.includes("[model-b]"))?.text ?? "";
    expect(listing).toContain("kept.txt");
    expect(listing).not.toContain("lost.txt");
  }, 180_000);

  it("a background process started on A, asked for from B, says where it runs", async () => {
    const { c, tg, model } = await cluster.start();
    const marker = uniqueSleep();
    model.setDefault(
      scripted({
        "start the job": { command: `sleep ${marker}`, background: true },
        "poll the job": "poll",
      }),
    );
    const a = await c.startWorker("model-a");
    tg.userSends({ chatId: 111, fromId: 111, text: "start the job" });
    await eventually(
      () => tg.botMessages(111).some((m) => m.text?.includes("[model-a]")),
      () => `no answer from A:\n${c.output()}`,
    );
    const started = tg.botMessages(111).find((m) => m.text?.includes("[model-a]"))?.text ?? "";
    const id = /p_[0-9a-f]+@([A-Za-z0-9.-]+)/.exec(started);
    expect(id, started).not.toBeNull();
    // Nothing to hand over (the process writes no file): the turn is finished once it is stored.
    await eventually(
      () => c.answers("telegram:").some((a) => a.includes("[model-a]")),
      () => `A's turn was not stored:\n${c.output()}`,
    );
    await c.kill(a);
    await c.startWorker("model-b");
    tg.userSends({ chatId: 111, fromId: 111, text: "poll the job" });
    await eventually(
      () => tg.botMessages(111).some((m) => m.text?.includes("[model-b]")),
      () => `no answer from B:\n${c.output()}`,
    );
    const reply = tg.botMessages(111).find((m) => m.text?.includes("[model-b]"))?.text ?? "";
    expect(reply).toContain(`runs on worker ${id?.[1]}`);
    expect(reply).toContain("cannot be polled");
  }, 180_000);
});
