/**
 * Control across processes on Redis: `/stop` and an interrupting message abort a turn running in a
 * `herald worker` process; progress (streamed text, tool lines) flows worker → gateway → chat; tools
 * reach the gateway's state over its authenticated API; a job id offered twice runs once; and the
 * operator is told when no worker runs or a worker lacks its settings.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BullJobQueue } from "../../agent/queue/bull-job-queue.js";
import { silentLogger } from "../../core/logger.js";
import type { QueueEvent, TurnJob } from "../../core/turn.js";
import { messageText } from "../fakes/llm/index.js";
import type { FakeTelegram } from "../fakes/telegram/index.js";
import { clusterPerTest, lastUser } from "../helpers/cluster-per-test.js";
import { eventually, type HeraldCluster } from "../helpers/herald-cluster.js";
import { redisPerFile } from "../helpers/redis.js";
import { processesWithArg, uniqueSleep } from "./exec-contract.js";

const cli = join(import.meta.dirname, "..", "..", "app", "cli.ts");

const redis = redisPerFile();
let queue: BullJobQueue | undefined;
const dirs: string[] = [];

// vitest runs afterEach hooks as a stack: the queue closes, then the cluster stops, then the folders go.
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const cluster = clusterPerTest(redis);
afterEach(async () => {
  await queue?.close();
  queue = undefined;
});

const command = (text: string) => ({ entities: [{ type: "bot_command", offset: 0, length: text.length }] });

async function replies(c: HeraldCluster, tg: FakeTelegram, count: number): Promise<string[]> {
  await eventually(
    () => tg.botMessages(111).length >= count,
    () => `${tg.botMessages(111).length} of ${count} replies:\n${c.output()}`,
  );
  return tg.botMessages(111).map((m) => m.text ?? "");
}

describe("herald worker on Redis", () => {
  it("stops a turn running in a worker process within 2 s of /stop or an interrupting message", async () => {
    const { c, tg, model } = await cluster.start();
    model.setDefault((request) => {
      const text = lastUser(request.messages);
      return text.startsWith("long") ? { text: "never sent", delayMs: 60_000 } : { text: `echo: ${text}` };
    });
    // Before a worker runs, the gateway says turns would wait.
    const idle = await c.health();
    expect(idle.status).toBe("degraded");
    expect(idle.warnings?.[0]).toMatch(/^0 workers consume the Redis queue/);
    await c.startWorker("wa", 2);

    tg.userSends({ chatId: 111, fromId: 111, text: "long task" });
    await model.waitForRequests(1);
    // From the user's message to the worker dropping the model call: Telegram poll → gateway →
    // Redis pub/sub → worker abort. It takes tens of ms here; 2 s is the promise to users.
    let sentAt = performance.now();
    tg.userSends({ chatId: 111, fromId: 111, text: "/stop", extra: command("/stop") });
    await model.waitForClosedEarly(1);
    expect(performance.now() - sentAt).toBeLessThan(2_000);
    expect(await replies(c, tg, 1)).toEqual(["⏹ Stopped."]);

    // Busy policy "interrupt": a newer message cancels the running turn and is answered instead.
    tg.userSends({ chatId: 111, fromId: 111, text: "long second" });
    await model.waitForRequests(2);
    sentAt = performance.now();
    tg.userSends({ chatId: 111, fromId: 111, text: "quick one" });
    await model.waitForClosedEarly(2);
    expect(performance.now() - sentAt).toBeLessThan(2_000);
    expect(await replies(c, tg, 2)).toEqual(["⏹ Stopped.", "echo: quick one"]);
    // The interrupted message stays in the session for the turn after it.
    const last = model.requests
      .at(-1)!
      .messages.filter((m) => m.role === "user")
      .map(messageText);
    expect(last.slice(-2)).toEqual(["long second", "quick one"]);
    expect(model.requests.map((r) => lastUser(r.messages))).toEqual([
      "long task",
      "long second",
      "quick one",
    ]);
  }, 60_000);

  it("runs tools against the gateway's state and shows their progress and streamed text", async () => {
    const { c, tg, model } = await cluster.start();
    model.setDefault((request) => {
      const text = lastUser(request.messages);
      const toolResults = request.messages.filter((m) => m.role === "tool");
      if (text.startsWith("what did I say") && toolResults.length === 0) {
        return {
          toolCalls: [
            { name: "session_search", arguments: { query: "rotation" } },
            {
              name: "memory",
              arguments: { action: "add", target: "user", content: "Rotates keys on Fridays." },
            },
          ],
        };
      }
      if (toolResults.length) return { text: "You rotate them on Fridays." };
      return { text: `echo: ${text}` };
    });
    await c.startWorker("wa");
    tg.userSends({ chatId: 111, fromId: 111, text: "key rotation happens on fridays" });
    await replies(c, tg, 1);
    tg.userSends({ chatId: 111, fromId: 111, text: "/new", extra: command("/new") });
    await replies(c, tg, 2);
    tg.userSends({ chatId: 111, fromId: 111, text: "what did I say about rotation?" });
    // The tool status line shows first; the reply follows and the status line is deleted.
    await eventually(
      () => tg.botMessages(111).some((m) => m.text === "You rotate them on Fridays."),
      () => `no answer:\n${c.output()}`,
    );

    // The worker's tools were served from the gateway's state: its session index and its memory files.
    const results = model.requests
      .at(-1)!
      .messages.filter((m) => m.role === "tool")
      .map(messageText);
    expect(results[0]).toContain("user: key **rotation** happens on fridays");
    expect(results[1]).not.toMatch(/^error/);
    expect(readFileSync(join(c.home, "memories", "USER.md"), "utf8")).toContain("Rotates keys on Fridays.");
    expect(existsSync(join(c.home, "worker-1", "memories"))).toBe(false);
    // Tool progress reached the chat as a status line while the turn ran.
    const lines = tg.calls
      .filter((call) => call.method === "sendMessage" || call.method === "editMessageText")
      .map((call) => String(call.params["text"]));
    expect(lines.some((line) => line.includes("session_search"))).toBe(true);

    // Streamed text: deltas published by the worker reach an API client as they come.
    model.script({ text: "one two three four five six", chunkDelayMs: 150 });
    const res = await fetch(`${c.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "herald", stream: true, messages: [{ role: "user", content: "count" }] }),
    });
    const pieces = (await res.text())
      .split("\n")
      .filter((l) => l.startsWith("data: {"))
      .map(
        (l) => (JSON.parse(l.slice(6)) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta,
      )
      .map((d) => d?.content ?? "")
      .filter(Boolean);
    expect(pieces.join("")).toBe("one two three four five six");
    expect(pieces.length).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it("ends the background processes a worker started for a session when the session is reset", async () => {
    const { c, tg, model } = await cluster.start();
    const marker = uniqueSleep();
    model.setDefault((request) => {
      const text = lastUser(request.messages);
      const toolResults = request.messages.filter((m) => m.role === "tool");
      if (text === "start the job" && toolResults.length === 0) {
        return {
          toolCalls: [{ name: "terminal", arguments: { command: `sleep ${marker}`, background: true } }],
        };
      }
      if (toolResults.length) return { text: "started it" };
      return { text: `echo: ${text}` };
    });
    await c.startWorker("wa");
    tg.userSends({ chatId: 111, fromId: 111, text: "start the job" });
    await eventually(
      () => tg.botMessages(111).some((m) => m.text === "started it"),
      () => `no answer:\n${c.output()}`,
    );
    // The process outlives the turn, in the worker's sandbox.
    expect(processesWithArg(marker).length).toBeGreaterThan(0);
    tg.userSends({ chatId: 111, fromId: 111, text: "/new", extra: command("/new") });
    await eventually(
      () => processesWithArg(marker).length === 0,
      () => `the worker's background process survived /new:\n${c.output()}`,
    );
  }, 60_000);

  it("runs a job offered twice under one id once, and re-emits its result when offered again", async () => {
    const { c, model } = await cluster.startApiOnly({ startGateway: false });
    model.setDefault((request) => ({ text: `ran ${lastUser(request.messages)}`, delayMs: 200 }));
    await c.startGateway();
    await c.startWorker("wa", 4);
    queue = new BullJobQueue({ logger: silentLogger(), connection: redis.url, prefix: c.prefix });
    const events: QueueEvent[] = [];
    queue.subscribe((e) => events.push(e));
    const id = "tdup:telegram:42";
    const job = turnJob(id, "only once");
    await Promise.all([
      queue.enqueue(job, { id, orderingKey: "k" }),
      queue.enqueue(job, { id, orderingKey: "k" }),
    ]);
    await queue.enqueue(job, { id, orderingKey: "k" });
    const completions = () => events.filter((e) => e.type === "completed" && e.jobId === id);
    await eventually(
      () => completions().length === 1,
      () => `no completion:\n${c.output()}`,
    );
    // A restarted gateway offers it again: the stored result comes back, the model is not asked again.
    await queue.enqueue(job, { id, orderingKey: "k" });
    await eventually(
      () => completions().length === 2,
      () => "the finished job was not re-emitted",
    );
    expect(completions()[1]).toMatchObject({ result: { kind: "ok", reply: { text: "ran only once" } } });
    expect(model.requests.map((r) => lastUser(r.messages))).toEqual(["only once"]);
  }, 60_000);

  it("refuses to start a worker without its settings, a gateway without its key, and tells doctor", async () => {
    const home = mkdtempSync(join(tmpdir(), "herald-cfg-"));
    dirs.push(home);
    // Asynchronous: the fake model in this process must keep answering (doctor asks it).
    const run = (args: string[], env: Record<string, string>) =>
      new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          ["--import", "tsx", cli, ...args],
          {
            env: { ...process.env, HERALD_HOME: home, HERALD_LOG_LEVEL: "silent", ...env },
            encoding: "utf8",
          },
          (err, stdout, stderr) => resolve({ status: err ? Number(err.code) : 0, stdout, stderr }),
        );
      });
    const redisEnv = { REDIS_URL: redis.url, HERALD_QUEUE_PREFIX: "cfgtest" };
    const worker = await run(["worker"], redisEnv);
    expect(worker.status).toBe(2);
    expect(worker.stderr).toContain("HERALD_GATEWAY_URL and HERALD_GATEWAY_KEY are not set");
    const gateway = await run(["gateway"], { ...redisEnv, API_SERVER_PORT: "0" });
    expect(gateway.status).toBe(2);
    expect(gateway.stderr).toContain("Configuration error (HERALD_GATEWAY_KEY)");

    const { c, model } = await cluster.startApiOnly();
    const wrongKey = await run(["worker"], {
      ...redisEnv,
      HERALD_QUEUE_PREFIX: c.prefix,
      HERALD_GATEWAY_URL: c.url,
      HERALD_GATEWAY_KEY: "not-the-key",
    });
    expect(wrongKey.status).toBe(2);
    expect(wrongKey.stderr).toContain("refused HERALD_GATEWAY_KEY");
    const doctor = await run(["doctor"], {
      ...redisEnv,
      HERALD_QUEUE_PREFIX: c.prefix,
      OPENAI_BASE_URL: model.url,
      HERALD_MODEL: "fake-model",
    });
    expect(doctor.stdout).toContain("✗ 0 workers consume the Redis queue");
    expect(doctor.stdout).toContain("✗ HERALD_GATEWAY_KEY is not set");
  }, 60_000);
});

function turnJob(turnId: string, text: string): TurnJob {
  return {
    kind: "turn",
    turnId,
    origin: {
      sessionId: "s",
      sessionKey: "k",
      chat: { platform: "api", chatId: "dup" },
      chatType: "dm",
      userId: "u",
    },
    history: [],
    input: { text },
    systemPrompt: "test",
    toolsets: [],
    createdAt: Date.now(),
  };
}
