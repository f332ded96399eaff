/**
 * Runs the Scheduler contract against the embedded timer and BullMQ job schedulers, and proves the
 * Redis promise: two BullSchedulers ("two processes") on one Redis deliver each tick once.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../core/logger.js";
import { BullScheduler } from "../../scheduler/bull-scheduler.js";
import { EmbeddedScheduler } from "../../scheduler/embedded-scheduler.js";
import type { Tick } from "../../scheduler/types.js";
import { type PrivateRedis, startRedis } from "../helpers/redis.js";
import { scheduled, schedulerContract, until } from "./scheduler.contract.js";

schedulerContract("EmbeddedScheduler", async () => new EmbeddedScheduler({ logger: silentLogger() }));

let redis: PrivateRedis | undefined;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

const bull = (prefix = `test-${randomBytes(6).toString("hex")}`) =>
  new BullScheduler({ logger: silentLogger(), connection: redis!.url, prefix });

// A unique prefix per case: cases share the server, never keys.
schedulerContract("BullScheduler", async () => bull());

describe("BullScheduler across processes", () => {
  it("two schedulers on one Redis deliver each tick once between them", async () => {
    const prefix = `test-${randomBytes(6).toString("hex")}`;
    const a = bull(prefix);
    const b = bull(prefix);
    const got: { by: string; tick: Tick }[] = [];
    try {
      await a.start((tick) => void got.push({ by: "a", tick }));
      await b.start((tick) => void got.push({ by: "b", tick }));
      const anchorAt = Date.now();
      const every = { kind: "every", everyMs: 200, anchorAt } as const;
      const at = Date.now() + 300;
      // Both processes schedule the same jobs (each syncs its jobs at start).
      for (const s of [a, b]) {
        await s.upsert(scheduled("every", every, anchorAt + 200));
        await s.upsert(scheduled("once", { kind: "once", at }, at));
      }
      await until(() => got.filter((g) => g.tick.jobId === "every").length >= 6, "six interval ticks");
      const everyTimes = got.filter((g) => g.tick.jobId === "every").map((g) => g.tick.tickAt);
      expect(new Set(everyTimes).size).toBe(everyTimes.length);
      expect(got.filter((g) => g.tick.jobId === "once").map((g) => g.tick.tickAt)).toEqual([at]);
      expect((await a.list()).map((e) => e.jobId)).toEqual(["every"]);
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});
