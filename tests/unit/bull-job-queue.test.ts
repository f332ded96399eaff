/**
 * What only the Redis queue has: several consumer processes (here several BullJobQueue instances on
 * one Redis, as `herald worker` processes would be), cancellation across them, and a Redis restart.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BullJobQueue, fromBullId, toBullId } from "../../agent/queue/bull-job-queue.js";
import { RedisNames } from "../../agent/queue/bull-names.js";
import { silentLogger } from "../../core/logger.js";
import type { JobQueue, QueueEvent, WorkerAnnouncement } from "../../core/turn.js";
import { deferred, okResult, record, turnJob } from "../contracts/job-queue.contract.js";
import { type PrivateRedis, startRedis } from "../helpers/redis.js";

let redis: PrivateRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

const open: JobQueue[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((q) => q.close()));
});

/** Instances sharing one prefix: one gateway and workers, as separate processes would be. */
function cluster(prefix = `test-${randomBytes(6).toString("hex")}`, locks: "default" | "short" = "default") {
  return () => {
    const queue = new BullJobQueue({
      logger: silentLogger(),
      connection: redis.url,
      prefix,
      backoffMs: 10,
      busyDelayMs: 100,
      // Short locks only where a killed worker's job must come back within seconds: elsewhere a slow
      // machine must not make a running job look stalled.
      ...(locks === "short" ? { lockDurationMs: 1_000, stalledIntervalMs: 500 } : {}),
    });
    open.push(queue);
    return queue;
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const completed = (jobId: string) => (e: QueueEvent) => e.type === "completed" && e.jobId === jobId;

describe("BullJobQueue", () => {
  it("maps any id to a colon-free BullMQ id and back", () => {
    for (const id of ["plain", "a:b:c", "%3A", "100%:x", "42", ""]) {
      const bullId = toBullId(id);
      expect(bullId).not.toContain(":");
      expect(bullId).not.toMatch(/^\d+$/);
      expect(fromBullId(bullId)).toBe(id);
    }
    expect(toBullId("a:b")).not.toBe(toBullId("a%3Ab"));
  });

  it("never runs one orderingKey on two consumers at once", async () => {
    const make = cluster();
    const gateway = make();
    const rec = record(gateway);
    const log = new Map<string, string[]>([
      ["a", []],
      ["b", []],
    ]);
    const ranOn = new Set<string>();
    let firstRunning = 0;
    const bothFirstsIn = deferred();
    const handlerFor = (worker: string) => async (job: ReturnType<typeof turnJob>) => {
      const [key, n] = job.input.text.split("/") as [string, string];
      ranOn.add(worker);
      log.get(key)!.push(`start ${n}`);
      if (n === "0") {
        // Each consumer takes one job at a time, so both first jobs running at once proves that two
        // consumers share the work.
        if (++firstRunning === 2) bothFirstsIn.resolve();
        await bothFirstsIn.promise;
      } else {
        await sleep(Math.floor(Math.random() * 20));
      }
      log.get(key)!.push(`end ${n}`);
      return okResult(job.turnId, "ok");
    };
    await make().consume(handlerFor("w1"), { concurrency: 1 });
    await make().consume(handlerFor("w2"), { concurrency: 1 });
    const perKey = 5;
    for (let n = 0; n < perKey; n++) {
      for (const key of ["a", "b"]) {
        await gateway.enqueue(turnJob(`${key}${n}`, `${key}/${n}`), { id: `${key}:${n}`, orderingKey: key });
      }
    }
    for (const key of ["a", "b"]) await rec.next(completed(`${key}:${perKey - 1}`));
    const expected = Array.from({ length: perKey }, (_, n) => [`start ${n}`, `end ${n}`]).flat();
    expect(log.get("a")).toEqual(expected);
    expect(log.get("b")).toEqual(expected);
    expect(ranOn).toEqual(new Set(["w1", "w2"]));
    const stats = await gateway.stats();
    expect(stats).toEqual({ waiting: 0, active: 0, workers: 2 });
  });

  it("aborts a job running on another consumer when the gateway cancels it", async () => {
    const make = cluster();
    const gateway = make();
    const rec = record(gateway);
    const started = deferred();
    const aborted = deferred();
    await make().consume(async (job, { signal }) => {
      if (job.turnId !== "long") return okResult(job.turnId, "ok");
      started.resolve();
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
      aborted.resolve();
      throw signal.reason;
    });
    await gateway.enqueue(turnJob("long"), { id: "long", orderingKey: "k" });
    await started.promise;
    await gateway.cancel("long");
    await aborted.promise;
    // The key is free again and the cancelled job emitted nothing.
    await gateway.enqueue(turnJob("next"), { id: "next", orderingKey: "k" });
    await rec.next(completed("next"));
    expect(rec.of("long")).toEqual([]);
  });

  it("completes every queued job exactly once across a Redis restart", async () => {
    const make = cluster();
    const gateway = make();
    const rec = record(gateway);
    const runs = new Map<string, number>();
    const firstStarted = deferred();
    const restarted = deferred();
    await make().consume(
      async (job) => {
        runs.set(job.turnId, (runs.get(job.turnId) ?? 0) + 1);
        firstStarted.resolve();
        // The first job is still running while Redis goes away and comes back.
        if (job.turnId === "a0") await restarted.promise;
        return okResult(job.turnId, `done ${job.turnId}`);
      },
      { concurrency: 2 },
    );
    const ids: string[] = [];
    for (let n = 0; n < 4; n++) {
      for (const key of ["a", "b"]) {
        ids.push(`${key}${n}`);
        await gateway.enqueue(turnJob(`${key}${n}`), { id: `${key}${n}`, orderingKey: key });
      }
    }
    await firstStarted.promise;
    await redis.restart();
    restarted.resolve();
    for (const id of ids) {
      const event = await rec.next(completed(id));
      expect(event).toMatchObject({ result: { reply: { text: `done ${id}` } } });
    }
    for (const id of ids) {
      expect(rec.of(id).filter((e) => e.type === "completed")).toHaveLength(1);
      expect(runs.get(id)).toBe(1);
    }
  });

  it("gives the job of a worker killed with SIGKILL to another worker, once", async () => {
    const prefix = `test-${randomBytes(6).toString("hex")}`;
    const make = cluster(prefix, "short");
    const gateway = make();
    const rec = record(gateway);
    const doomed = spawnWorker(prefix);
    try {
      await doomed.line("ready");
      await gateway.enqueue(turnJob("victim"), { id: "victim", orderingKey: "k" });
      await gateway.enqueue(turnJob("after"), { id: "after", orderingKey: "k" });
      await doomed.line("started victim");
      await doomed.kill();
      const ran: string[] = [];
      await make().consume(async (job) => {
        ran.push(job.turnId);
        return okResult(job.turnId, `survivor ${job.turnId}`);
      });
      await rec.next(completed("after"));
      expect(ran).toEqual(["victim", "after"]);
      expect(rec.events.filter((e) => e.type === "completed").map((e) => e.jobId)).toEqual([
        "victim",
        "after",
      ]);
    } finally {
      await doomed.kill();
    }
  });

  it("tells every listening worker what the gateway announces, counts them, and skips malformed messages", async () => {
    const prefix = `test-${randomBytes(6).toString("hex")}`;
    const gateway = cluster(prefix)();
    // Nobody listens yet.
    expect(await gateway.announce({ type: "reload", what: "mcp" })).toBe(0);
    const logLines: { msg: string; problem?: string }[] = [];
    const heard: WorkerAnnouncement[][] = [[], []];
    for (const ear of heard) {
      const worker = new BullJobQueue({
        logger: pino(
          { level: "warn" },
          new Writable({
            write(chunk: Buffer, _encoding, done) {
              logLines.push(JSON.parse(chunk.toString()) as { msg: string });
              done();
            },
          }),
        ),
        connection: redis.url,
        prefix,
      });
      open.push(worker);
      worker.onAnnouncement((event) => ear.push(event));
      // As `herald worker` does: listen, then consume (after which it counts as a worker).
      await worker.consume(async (job) => okResult(job.turnId, "ok"));
    }
    expect(await gateway.announce({ type: "reload", what: "plugins" })).toBe(2);
    const raw = new Redis(redis.url);
    try {
      const channel = new RedisNames(prefix).channel("announcements");
      for (const bad of ["not json", '{"type":"reload","what":"everything"}', '{"type":"session-ended"}']) {
        expect(await raw.publish(channel, bad)).toBe(2);
      }
    } finally {
      raw.disconnect();
    }
    expect(await gateway.announce({ type: "session-ended", sessionKey: "telegram:dm:111" })).toBe(2);
    const expected: WorkerAnnouncement[] = [
      { type: "reload", what: "plugins" },
      { type: "session-ended", sessionKey: "telegram:dm:111" },
    ];
    for (const ear of heard) await expect.poll(() => ear).toEqual(expected);
    // Each worker logged each malformed message once, saying what was wrong.
    const skipped = logLines.filter((l) => l.msg === "malformed announcement skipped");
    expect(skipped).toHaveLength(6);
    expect(skipped.map((l) => l.problem)).toContainEqual(expect.stringMatching(/^not JSON/));
    expect(skipped.map((l) => l.problem)).toContainEqual(expect.stringMatching(/what/));
    await gateway.close();
    await expect(gateway.announce({ type: "reload", what: "mcp" })).rejects.toThrow(/closed/);
  });
});

/** A consumer in its own process whose handler never returns, as a worker that hangs until killed. */
function spawnWorker(prefix: string) {
  const queueModule = new URL("../../agent/queue/bull-job-queue.ts", import.meta.url).pathname;
  const loggerModule = new URL("../../core/logger.ts", import.meta.url).pathname;
  const script = `
    import { BullJobQueue } from ${JSON.stringify(queueModule)};
    import { silentLogger } from ${JSON.stringify(loggerModule)};
    const queue = new BullJobQueue({
      logger: silentLogger(), connection: ${JSON.stringify(redis.url)}, prefix: ${JSON.stringify(prefix)},
      lockDurationMs: 1000, stalledIntervalMs: 500,
    });
    await queue.consume(async (job) => {
      process.stdout.write("started " + job.turnId + "\\n");
      return new Promise(() => {});
    }, { concurrency: 1 });
    process.stdout.write("ready\\n");
  `;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines: string[] = [];
  const waiters: { text: string; resolve: () => void }[] = [];
  let buffered = "";
  child.stdout.on("data", (chunk: Buffer) => {
    buffered += chunk.toString();
    const parts = buffered.split("\n");
    buffered = parts.pop() ?? "";
    for (const line of parts) {
      lines.push(line);
      for (const w of waiters.filter((w) => w.text === line)) w.resolve();
    }
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    line(text: string): Promise<void> {
      if (lines.includes(text)) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ text, resolve }));
    },
    async kill(): Promise<void> {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}
