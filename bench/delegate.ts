/**
 * Delegate scenario: fan-out overhead of `delegate_task`. One API-server turn whose model delegates 10
 * trivial tasks (the fake model answers at once), end to end, on the embedded queue and on BullMQ with
 * 1, 2 and 4 `herald worker` processes (real processes from dist/, a private redis-server). Every
 * process has slots for all ten children at once (`max_parallel` 10). Beside it, a plain turn (one model
 * call) in the same mode; the overhead is the delegating turn minus the plain turn minus two model
 * round trips (the parent's second call, and the children's one parallel call).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { type FakeLlmRequest, messageText, startFakeLlm } from "../tests/fakes/llm/index.js";
import {
  freePort,
  machineLine,
  measureFloor,
  median,
  percentile,
  postTurn,
  round,
  spawnGateway,
} from "./lib.js";

export interface DelegateBenchOptions {
  root: string;
  workerCounts: number[];
  /** Delegating turns measured per mode (after 5 warm-up turns). */
  turns: number;
  children: number;
}

export interface DelegateModeResult {
  mode: string;
  delegateP50Ms: number;
  delegateP99Ms: number;
  plainP50Ms: number;
  overheadP50Ms: number;
}

export interface DelegateBenchResult {
  floorP50Ms: number;
  modes: DelegateModeResult[];
}

const isChild = (r: FakeLlmRequest) => messageText(r.messages[0]).includes("sub-agent");

export async function benchDelegate(options: DelegateBenchOptions): Promise<DelegateBenchResult> {
  const llm = await startFakeLlm({ keepRequests: false });
  const tasks = Array.from({ length: options.children }, (_, i) => ({ goal: `trivial task ${i + 1}` }));
  llm.setDefault((request) => {
    if (isChild(request)) return { text: "ok" };
    const last = request.messages.at(-1);
    if (last?.role === "tool") return { text: "all done" };
    if (messageText(last).startsWith("plain")) return { text: "ok" };
    return {
      toolCalls: [{ name: "delegate_task", arguments: { tasks, max_parallel: options.children } }],
    };
  });
  const redis = await startRedis();
  try {
    const floor = await measureFloor(llm.url, 200);
    const floorP50 = median(floor);
    const modes: DelegateModeResult[] = [];
    for (const workers of [0, ...options.workerCounts])
      modes.push(await runMode(options, workers, llm.url, redis.url, floorP50));
    return { floorP50Ms: round(floorP50), modes };
  } finally {
    await redis.stop();
    await llm.close();
  }
}

async function runMode(
  options: DelegateBenchOptions,
  workerCount: number,
  llmUrl: string,
  redisUrl: string,
  floorP50: number,
): Promise<DelegateModeResult> {
  const slots = String(options.children + 1);
  const base = {
    OPENAI_BASE_URL: llmUrl,
    OPENAI_API_KEY: "bench",
    HERALD_MODEL: "fake-model",
    HERALD_LEARNING_ENABLED: "false",
    HERALD_DELEGATE_MAX_PARALLEL: String(options.children),
    HERALD_CONCURRENCY: slots,
  };
  const key = randomBytes(16).toString("hex");
  const queueEnv: Record<string, string> = workerCount
    ? {
        REDIS_URL: redisUrl,
        HERALD_QUEUE_PREFIX: `bd${randomBytes(4).toString("hex")}`,
        HERALD_GATEWAY_KEY: key,
      }
    : {};
  const gw = await spawnGateway({ ...base, ...queueEnv }, options.root);
  const workers: { child: ChildProcess; home: string }[] = [];
  try {
    for (let i = 0; i < workerCount; i++) {
      const home = mkdtempSync(join(tmpdir(), "herald-bench-worker-"));
      const child = spawn(
        process.execPath,
        [join(options.root, "dist/app/cli.js"), "worker", "--concurrency", slots],
        {
          env: { ...process.env, ...base, ...queueEnv, HERALD_HOME: home, HERALD_GATEWAY_URL: gw.url },
          stdio: ["ignore", "ignore", "inherit"],
        },
      );
      workers.push({ child, home });
    }
    if (workerCount) {
      for (;;) {
        const health = (await (await fetch(`${gw.url}/health`)).json()) as { queue: { workers?: number } };
        if (health.queue.workers === workerCount) break;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    for (let i = 0; i < 5; i++) await postTurn(gw.url, `delegate warm ${i}`, `warm-${i}`);
    for (let i = 0; i < 20; i++) await postTurn(gw.url, `plain warm ${i}`, "plain-warm");
    const plain: number[] = [];
    for (let i = 0; i < options.turns * 2; i++) {
      const t0 = performance.now();
      await postTurn(gw.url, `plain ${i}`, `plain-${i % 10}`);
      plain.push(performance.now() - t0);
    }
    const delegating: number[] = [];
    for (let i = 0; i < options.turns; i++) {
      const t0 = performance.now();
      await postTurn(gw.url, `delegate ${i}`, `d-${i}`);
      delegating.push(performance.now() - t0);
    }
    const d50 = median(delegating);
    const p50 = median(plain);
    return {
      mode: workerCount ? `redis, ${workerCount} worker${workerCount > 1 ? "s" : ""}` : "embedded",
      delegateP50Ms: round(d50),
      delegateP99Ms: round(percentile(delegating, 99)),
      plainP50Ms: round(p50),
      overheadP50Ms: round(d50 - p50 - 2 * floorP50),
    };
  } finally {
    for (const w of workers) {
      w.child.kill("SIGTERM");
      await new Promise((r) => w.child.once("exit", r));
      rmSync(w.home, { recursive: true, force: true });
    }
    await gw.stop();
  }
}

async function startRedis(): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "herald-bench-redis-"));
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
    { stdio: "ignore" },
  );
  const { Redis } = await import("ioredis");
  const probe = new Redis(`redis://127.0.0.1:${port}`, { lazyConnect: true, maxRetriesPerRequest: 1 });
  probe.on("error", () => undefined);
  for (let i = 0; ; i++) {
    try {
      await probe.connect().catch(() => undefined);
      if ((await probe.ping()) === "PONG") break;
    } catch {
      if (i > 100 || child.exitCode !== null) throw new Error("redis-server did not answer");
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  probe.disconnect();
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function delegateMarkdown(
  result: DelegateBenchResult,
  options: DelegateBenchOptions,
  command: string,
): string {
  const rows = result.modes.map(
    (m) => `| ${m.mode} | ${m.delegateP50Ms} | ${m.delegateP99Ms} | ${m.plainP50Ms} | ${m.overheadP50Ms} |`,
  );
  return [
    "## delegate_task fan-out",
    "",
    `\`${command}\` on ${machineLine()}. One turn delegating ${options.children} trivial tasks (the fake model answers at once; all children in parallel), ${options.turns} turns per mode, sequential. Overhead = delegating turn − plain turn − 2 × model round trip (floor p50 ${result.floorP50Ms} ms). Target: ≤ 50 ms on the embedded queue.`,
    "",
    `The machine is shared: 1-minute load average ${loadavg()[0]?.toFixed(1)} at the end; wall times swing with the other tenants between runs.`,
    "",
    "| mode | delegating turn p50 ms | p99 ms | plain turn p50 ms | fan-out overhead p50 ms |",
    "|---|---|---|---|---|",
    ...rows,
  ].join("\n");
}
