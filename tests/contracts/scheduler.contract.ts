/**
 * The Scheduler contract suite: every backend runs these cases on real time with sub-second schedules
 * (the contract takes any `Schedule`; the one-minute floor is the parser's). No case asserts on
 * wall-clock time; "fired only once" is proven by a later tick of another job that must come after.
 */
import { afterEach, describe, expect, it } from "vitest";
import { nextOccurrence } from "../../scheduler/schedule.js";
import type { Schedule, ScheduledJob, Scheduler, Tick } from "../../scheduler/types.js";

/** Builds a fresh scheduler for one case. */
export type MakeScheduler = () => Promise<Scheduler>;

/** Resolves once `check` is true (polls every 20 ms; rejects after `timeoutMs`). */
export async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A job whose first tick is `schedule`'s next occurrence after now (as the cron service persists it). */
export function scheduled(id: string, schedule: Schedule, nextRunAt: number, paused = false): ScheduledJob {
  return { id, schedule, paused, nextRunAt };
}

export function schedulerContract(name: string, make: MakeScheduler): void {
  describe(`Scheduler contract: ${name}`, () => {
    let scheduler: Scheduler | undefined;
    const ticks: Tick[] = [];

    afterEach(async () => {
      await scheduler?.stop();
      scheduler = undefined;
      ticks.length = 0;
    });

    async function started(): Promise<Scheduler> {
      scheduler = await make();
      await scheduler.start((tick) => {
        ticks.push(tick);
      });
      return scheduler;
    }

    const of = (jobId: string) => ticks.filter((t) => t.jobId === jobId);

    it("fires a one-shot once, with its time, and forgets it", async () => {
      const s = await started();
      const at = Date.now() + 150;
      await s.upsert(scheduled("once", { kind: "once", at }, at));
      // Upserting again (a restart, a second sync) must not add a second tick.
      await s.upsert(scheduled("once", { kind: "once", at }, at));
      const marker = Date.now() + 600;
      await s.upsert(scheduled("marker", { kind: "once", at: marker }, marker));
      await until(() => of("marker").length > 0 && of("once").length > 0, "the one-shot and marker ticks");
      expect(of("once")).toEqual([{ jobId: "once", tickAt: at }]);
      expect((await s.list()).map((e) => e.jobId)).not.toContain("once");
    });

    it("fires an interval on its grid, each occurrence once", async () => {
      const s = await started();
      const anchorAt = Date.now();
      const everyMs = 200;
      await s.upsert(scheduled("every", { kind: "every", everyMs, anchorAt }, anchorAt + everyMs));
      await until(() => of("every").length >= 3, "three interval ticks");
      const times = of("every").map((t) => t.tickAt);
      expect(new Set(times).size).toBe(times.length);
      for (const t of times) expect((t - anchorAt) % everyMs).toBe(0);
      expect(times).toEqual([...times].sort((a, b) => a - b));
    });

    it("lists what is scheduled; remove and pause unschedule", async () => {
      const s = await started();
      const now = Date.now();
      const daily: Schedule = { kind: "cron", expr: "0 8 * * *", timezone: "Europe/Berlin" };
      const hourly: Schedule = { kind: "every", everyMs: 3_600_000, anchorAt: now };
      await s.upsert(scheduled("daily", daily, nextOccurrence(daily, now)!));
      await s.upsert(scheduled("hourly", hourly, now + 3_600_000));
      const listed = await s.list();
      expect(listed.map((e) => e.jobId).sort()).toEqual(["daily", "hourly"]);
      expect(listed.find((e) => e.jobId === "hourly")?.nextRunAt).toBe(now + 3_600_000);
      // 08:00 in Berlin, whatever the backend's own cron math would say.
      expect(listed.find((e) => e.jobId === "daily")?.nextRunAt).toBe(nextOccurrence(daily, now));
      for (const e of listed) expect(e.nextRunAt).toBeGreaterThan(now);
      await s.remove("daily");
      await s.upsert(scheduled("hourly", hourly, now + 3_600_000, true));
      await s.remove("unknown");
      expect(await s.list()).toEqual([]);
    });

    it("does not fire a job paused before its tick, nor a removed one", async () => {
      const s = await started();
      const at = Date.now() + 200;
      await s.upsert(scheduled("paused", { kind: "once", at }, at));
      await s.upsert(scheduled("paused", { kind: "once", at }, at, true));
      await s.upsert(
        scheduled("removed", { kind: "every", everyMs: 150, anchorAt: Date.now() }, Date.now() + 150),
      );
      await s.remove("removed");
      const marker = Date.now() + 500;
      await s.upsert(scheduled("marker", { kind: "once", at: marker }, marker));
      await until(() => of("marker").length > 0, "the marker tick");
      expect(ticks.map((t) => t.jobId)).toEqual(["marker"]);
    });
  });
}
