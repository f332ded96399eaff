/**
 * The embedded timer under fake time: ticks come at the instants the schedule names (DST included),
 * once per occurrence, and after a pause in time (downtime) one tick, not a burst.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../../core/logger.js";
import { EmbeddedScheduler } from "../../scheduler/embedded-scheduler.js";
import { nextOccurrence } from "../../scheduler/schedule.js";
import type { Schedule, Tick } from "../../scheduler/types.js";

const HOUR = 3_600_000;
let scheduler: EmbeddedScheduler | undefined;
const fired: { tick: Tick; now: number }[] = [];

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
  fired.length = 0;
});

afterEach(async () => {
  await scheduler?.stop();
  scheduler = undefined;
  vi.useRealTimers();
});

async function startAt(iso: string, jobs: { id: string; schedule: Schedule }[]) {
  vi.setSystemTime(Date.parse(iso));
  scheduler = new EmbeddedScheduler({ logger: silentLogger() });
  for (const { id, schedule } of jobs) {
    await scheduler.upsert({ id, schedule, paused: false, nextRunAt: nextOccurrence(schedule, Date.now()) });
  }
  await scheduler.start((tick, now) => {
    fired.push({ tick, now });
  });
}

const iso = (ms: number) => new Date(ms).toISOString();

describe("EmbeddedScheduler", () => {
  it("fires a Berlin weekday-08:00 job at 08:00 local across the spring DST change", async () => {
    await startAt("2024-03-28T12:00:00Z", [
      { id: "j1", schedule: { kind: "cron", expr: "0 8 * * 1-5", timezone: "Europe/Berlin" } },
    ]);
    await vi.advanceTimersByTimeAsync(6 * 24 * HOUR);
    // Fri 29 Mar (CET, 07:00 UTC), weekend skipped, Mon 1 Apr and Tue 2 Apr (CEST, 06:00 UTC).
    expect(fired.map((f) => iso(f.tick.tickAt))).toEqual([
      "2024-03-29T07:00:00.000Z",
      "2024-04-01T06:00:00.000Z",
      "2024-04-02T06:00:00.000Z",
      "2024-04-03T06:00:00.000Z",
    ]);
    // Each tick is delivered at its instant, not early and not late.
    for (const f of fired) expect(f.now).toBe(f.tick.tickAt);
  });

  it("fires a job in the autumn DST overlap once", async () => {
    await startAt("2024-10-26T12:00:00Z", [
      { id: "j1", schedule: { kind: "cron", expr: "30 2 * * *", timezone: "Europe/Berlin" } },
    ]);
    await vi.advanceTimersByTimeAsync(2 * 24 * HOUR);
    expect(fired.map((f) => iso(f.tick.tickAt))).toEqual([
      "2024-10-27T00:30:00.000Z",
      "2024-10-28T01:30:00.000Z",
    ]);
  });

  it("fires intervals on their grid and a one-shot once", async () => {
    const t0 = Date.parse("2024-06-03T10:00:00Z");
    await startAt(iso(t0), [
      { id: "every", schedule: { kind: "every", everyMs: 30 * 60_000, anchorAt: t0 } },
      { id: "once", schedule: { kind: "once", at: t0 + 20 * 60_000 } },
    ]);
    await vi.advanceTimersByTimeAsync(2 * HOUR);
    expect(fired.map((f) => `${f.tick.jobId}@${iso(f.tick.tickAt).slice(11, 16)}`)).toEqual([
      "once@10:20",
      "every@10:30",
      "every@11:00",
      "every@11:30",
      "every@12:00",
    ]);
    expect((await scheduler!.list()).map((e) => e.jobId)).toEqual(["every"]);
  });

  it("after downtime delivers one tick per job (the first missed one), then continues on schedule", async () => {
    const t0 = Date.parse("2024-06-03T10:00:00Z");
    const schedule: Schedule = { kind: "every", everyMs: HOUR, anchorAt: t0 };
    // The persisted next tick is ten hours in the past when the process starts again.
    vi.setSystemTime(t0 + 10 * HOUR + 5 * 60_000);
    scheduler = new EmbeddedScheduler({ logger: silentLogger() });
    await scheduler.upsert({ id: "j1", schedule, paused: false, nextRunAt: t0 + HOUR });
    await scheduler.start((tick, now) => {
      fired.push({ tick, now });
    });
    await vi.advanceTimersByTimeAsync(HOUR);
    expect(fired.map((f) => iso(f.tick.tickAt))).toEqual([iso(t0 + HOUR), iso(t0 + 11 * HOUR)]);
  });

  it("stops firing a removed or paused job", async () => {
    const t0 = Date.parse("2024-06-03T10:00:00Z");
    const schedule: Schedule = { kind: "every", everyMs: HOUR, anchorAt: t0 };
    await startAt(iso(t0), [
      { id: "a", schedule },
      { id: "b", schedule },
    ]);
    await vi.advanceTimersByTimeAsync(HOUR);
    await scheduler!.remove("a");
    await scheduler!.upsert({ id: "b", schedule, paused: true, nextRunAt: t0 + 2 * HOUR });
    await vi.advanceTimersByTimeAsync(3 * HOUR);
    expect(fired.map((f) => f.tick.jobId)).toEqual(["a", "b"]);
  });
});
