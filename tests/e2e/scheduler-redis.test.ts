/**
 * Cron on Redis, whole path: two gateway "processes" (runner, queue, SQLite state, cron service) each
 * with its own state file holding the same job, and BullSchedulers on one Redis. Each tick reaches one
 * process, so each tick runs and is delivered once in all. The job ticks every 250 ms (the store takes
 * any schedule; the one-minute floor is the parser's), so the test sees several ticks quickly.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { silentLogger } from "../../core/logger.js";
import { BullScheduler } from "../../scheduler/bull-scheduler.js";
import type { CronJobSpec } from "../../scheduler/types.js";
import { FakeChatAdapter } from "../fakes/chat/index.js";
import { startCronGateway } from "../helpers/cron-gateway.js";
import { type PrivateRedis, startRedis } from "../helpers/redis.js";

let redis: PrivateRedis | undefined;
let dir: string;

beforeAll(async () => {
  redis = await startRedis();
  dir = mkdtempSync(join(tmpdir(), "herald-cron-redis-"));
});

afterAll(async () => {
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

it("two processes on one Redis run each tick of a job once between them", async () => {
  const prefix = `test-${randomBytes(6).toString("hex")}`;
  const anchorAt = Date.now();
  const spec: CronJobSpec = {
    name: "shared",
    prompt: "status",
    schedule: { kind: "every", everyMs: 250, anchorAt },
    deliver: ["fakechat:room"],
    origin: { platform: "fakechat", chatId: "room" },
    createdBy: "alice",
  };
  const chats = [new FakeChatAdapter(), new FakeChatAdapter()];
  const [a, b] = await Promise.all(
    ["a", "b"].map((name, i) =>
      startCronGateway({
        homeDir: join(dir, name),
        scheduler: new BullScheduler({ logger: silentLogger(), connection: redis!.url, prefix }),
        adapters: [chats[i]!],
        jobs: { jshared: { spec, nextRunAt: anchorAt + 250 } },
      }),
    ),
  );
  try {
    const done = () => [...a!.runs("jshared"), ...b!.runs("jshared")].filter((r) => r.status === "ok");
    const deadline = Date.now() + 15_000;
    while (done().length < 6) {
      if (Date.now() > deadline) throw new Error(`only ${done().length} runs finished`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const finished = done();
    const ticks = finished.map((r) => r.tickAt);
    expect(new Set(ticks).size).toBe(ticks.length);
    for (const t of ticks) expect((t - anchorAt) % 250).toBe(0);
    // Every finished run is delivered once, by the process that ran it.
    const delivered = () => chats.flatMap((c) => c.texts());
    while (!finished.every((run) => delivered().includes(`report ${run.id}`))) {
      if (Date.now() > deadline) throw new Error(`only ${delivered().length} reports delivered`);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(new Set(delivered()).size).toBe(delivered().length);
  } finally {
    await a!.stop();
    await b!.stop();
  }
});
