/**
 * SqliteCronStore on a real state.db: a tick is claimed once across connections (two processes, a
 * restart), runs move queued → running → final once, and the change counter moves for what a running
 * gateway must notice.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runIdFor, SqliteCronStore } from "../../scheduler/sqlite-cron-store.js";
import type { CronJobSpec } from "../../scheduler/types.js";
import { SqliteState } from "../../sessions/sqlite-state.js";

const T0 = Date.parse("2024-06-03T10:00:00Z");
const HOUR = 3_600_000;
const spec: CronJobSpec = {
  name: "status",
  prompt: "check the status page",
  schedule: { kind: "every", everyMs: HOUR, anchorAt: T0 },
  deliver: ["local"],
};

let dir: string;
let path: string;
const open: SqliteCronStore[] = [];

function store(): SqliteCronStore {
  const s = SqliteCronStore.open(path);
  open.push(s);
  return s;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "herald-cron-"));
  path = join(dir, "state.db");
});

afterEach(() => {
  for (const s of open.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

const claim = (nextRunAt: number | undefined) => ({
  tickAt: T0 + HOUR,
  nextRunAt,
  consumeSkip: false,
  queueRun: true,
});

describe("SqliteCronStore", () => {
  it("shares the file with SqliteState (one migration history)", () => {
    const state = SqliteState.open(path);
    const a = store();
    a.insertJob("j1", spec, T0 + HOUR, T0);
    state.close();
    const again = SqliteState.open(path);
    expect(again.isOpen).toBe(true);
    again.close();
    expect(store().getJob("j1")?.name).toBe("status");
  });

  it("claims a tick once across two connections, queueing one run", () => {
    const a = store();
    const b = store();
    a.insertJob("j1", spec, T0 + HOUR, T0);
    const first = a.claimTick("j1", T0 + HOUR, claim(T0 + 2 * HOUR), T0 + HOUR);
    const second = b.claimTick("j1", T0 + HOUR, claim(T0 + 2 * HOUR), T0 + HOUR);
    expect(first).toMatchObject({ id: runIdFor("j1", T0 + HOUR, "scheduled"), status: "queued" });
    expect(second).toBeUndefined();
    expect(b.openRuns()).toHaveLength(1);
    expect(b.getJob("j1")).toMatchObject({ nextRunAt: T0 + 2 * HOUR, lastTickAt: T0 + HOUR });
    // After a restart the claimed tick is not due any more: the cursor moved past it.
    a.close();
    const c = store();
    expect(c.claimTick("j1", T0 + HOUR, claim(T0 + 2 * HOUR), T0 + HOUR)).toBeUndefined();
    expect(c.openRuns()).toHaveLength(1);
  });

  it("does not claim a paused job; a skipped claim counts down the back-off", () => {
    const a = store();
    a.insertJob("j1", spec, T0 + HOUR, T0);
    a.setPaused("j1", true, T0 + HOUR, T0);
    expect(a.claimTick("j1", T0 + HOUR, claim(T0 + 2 * HOUR), T0 + HOUR)).toBeUndefined();
    a.setPaused("j1", false, T0 + HOUR, T0);
    a.recordFailure("j1", () => 2);
    const skipped = a.claimTick(
      "j1",
      T0 + HOUR,
      { tickAt: T0 + HOUR, nextRunAt: T0 + 2 * HOUR, consumeSkip: true, queueRun: false },
      T0,
    );
    expect(skipped).toBe("claimed");
    expect(a.getJob("j1")?.skipTicks).toBe(1);
    expect(a.openRuns()).toHaveLength(0);
  });

  it("moves a run queued → running → final once, and keeps the last 50 runs of a job", () => {
    const a = store();
    a.insertJob("j1", spec, T0 + HOUR, T0);
    const run = a.addRun("j1", T0, "manual", T0);
    expect(a.addRun("j1", T0, "manual", T0).id).toBe(run.id);
    expect(a.startRun(run.id, "cron:thread:j1:x", T0)).toBe(true);
    expect(store().startRun(run.id, "cron:thread:j1:x", T0)).toBe(false);
    expect(a.finishRun(run.id, { status: "ok", output: "fine" }, T0 + 5_000)).toBe(true);
    expect(a.finishRun(run.id, { status: "failed", error: "late" }, T0 + 6_000)).toBe(false);
    expect(a.getRun(run.id)).toMatchObject({
      status: "ok",
      output: "fine",
      startedAt: T0,
      finishedAt: T0 + 5_000,
    });
    for (let i = 1; i <= 60; i++) {
      const r = a.addRun("j1", T0 + i, "manual", T0 + i);
      a.finishRun(r.id, { status: "ok" }, T0 + i);
    }
    expect(a.runs("j1", 100)).toHaveLength(50);
    expect(a.runs("j1", 1)[0]?.tickAt).toBe(T0 + 60);
  });

  it("reports a failure streak once until a success clears it", () => {
    const a = store();
    a.insertJob("j1", spec, T0 + HOUR, T0);
    expect(a.recordFailure("j1", (n) => n - 1)).toEqual({ failures: 1, report: true });
    expect(a.recordFailure("j1", (n) => n - 1)).toEqual({ failures: 2, report: false });
    expect(a.getJob("j1")).toMatchObject({ failures: 2, skipTicks: 1, failureReported: true });
    a.recordSuccess("j1");
    expect(a.getJob("j1")).toMatchObject({ failures: 0, skipTicks: 0, failureReported: false });
    expect(a.recordFailure("j1", () => 0).report).toBe(true);
    expect(a.markTargetReported("j1", "telegram", true)).toBe(true);
    expect(a.markTargetReported("j1", "telegram", true)).toBe(false);
    expect(a.markTargetReported("j1", "telegram", false)).toBe(true);
  });

  it("moves the change counter for edits another process makes, not for claims", () => {
    const a = store();
    const b = store();
    const v0 = b.version();
    a.insertJob("j1", spec, T0 + HOUR, T0);
    const v1 = b.version();
    expect(v1).toBeGreaterThan(v0);
    a.claimTick("j1", T0 + HOUR, { ...claim(T0 + 2 * HOUR), queueRun: false }, T0);
    a.recordFailure("j1", () => 0);
    expect(b.version()).toBe(v1);
    a.updateSpec("j1", { ...spec, prompt: "other" }, T0 + 2 * HOUR, T0);
    const v2 = b.version();
    expect(v2).toBeGreaterThan(v1);
    a.addRun("j1", T0, "manual", T0);
    const v3 = b.version();
    expect(v3).toBeGreaterThan(v2);
    a.deleteJob("j1");
    expect(b.version()).toBeGreaterThan(v3);
    expect(b.getJob("j1")).toBeUndefined();
    expect(b.openRuns()).toHaveLength(0);
  });
});
