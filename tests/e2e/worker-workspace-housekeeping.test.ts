/**
 * Workspace pruning by `herald worker`s that share HERALD_HOME, on real files and processes, through
 * the housekeeping options the worker starts with (`workerHousekeeping`): a workspace unused past the
 * retention goes, a recent one stays, one where another worker's background process runs stays because
 * that worker's heartbeat keeps its record fresh, and passes running at once delete each old workspace
 * once and nothing live.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  type HousekeepingOptions,
  runHousekeeping,
  startHousekeeping,
  startWorkspaceHeartbeat,
  workerHousekeeping,
} from "../../agent/exec/housekeeping.js";
import { LocalBackend } from "../../agent/exec/local.js";
import { ProcessRegistry } from "../../agent/exec/processes.js";
import type { Workspace } from "../../agent/exec/types.js";
import { WorkspaceManager } from "../../agent/exec/workspaces.js";
import { loadConfig } from "../../app/config.js";
import { silentLogger } from "../../core/logger.js";
import { processesWithArg, uniqueSleep } from "./exec-contract.js";

const DAY = 86_400_000;

interface Worker {
  manager: WorkspaceManager;
  processes: ProcessRegistry;
  housekeeping: HousekeepingOptions;
}

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function sharedHome(): string {
  const home = mkdtempSync(join(tmpdir(), "herald-shared-home-"));
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  return home;
}

/** A worker on `home`, as `herald worker` builds its workspaces, processes and housekeeping. */
function worker(home: string): Worker {
  const config = loadConfig({ env: { HERALD_HOME: home } });
  const manager = new WorkspaceManager({ rootDir: join(config.homeDir, "workspaces") });
  const processes = new ProcessRegistry({ backend: new LocalBackend(), killGraceMs: 300 });
  cleanups.push(() => processes.closeAll());
  return {
    manager,
    processes,
    housekeeping: workerHousekeeping(config, { workspaces: manager, processes }, silentLogger()),
  };
}

/** A session's workspace as a turn leaves it: a file at the top and one below. */
async function usedWorkspace(w: Worker, sessionKey: string): Promise<Workspace> {
  const ws = await w.manager.ensure({ sessionKey });
  mkdirSync(join(ws.dir, "src"), { recursive: true });
  writeFileSync(join(ws.dir, "notes.md"), "notes");
  writeFileSync(join(ws.dir, "src", "main.py"), "print(1)");
  return ws;
}

/** Last used `days` ago: its record and its folder's own time. */
function age(w: Worker, ws: Workspace, days: number): void {
  const at = new Date(Date.now() - days * DAY);
  utimesSync(ws.dir, at, at);
  utimesSync(w.manager.usedMarker(ws.dir), at, at);
}

/** Starts a background process in `ws` on `w`, as the terminal tool with `background: true` does. */
function startProcess(w: Worker, ws: Workspace, sessionKey: string): string {
  const marker = uniqueSleep();
  w.processes.start(sessionKey, ws, { command: `sleep ${marker}` });
  return marker;
}

async function expectUsedWithin(w: Worker, ws: Workspace, ms: number): Promise<void> {
  await vi.waitFor(async () => expect(await w.manager.lastUsedAt(ws.dir)).toBeGreaterThan(Date.now() - ms), {
    timeout: 5_000,
    interval: 20,
  });
}

describe("workspace housekeeping of workers sharing HERALD_HOME", () => {
  it("prunes a workspace unused past exec.workspace_retention_days and keeps a recently used one", async () => {
    const a = worker(sharedHome());
    const old = await usedWorkspace(a, "telegram:dm:1");
    const recent = await usedWorkspace(a, "telegram:dm:2");
    age(a, old, 31);
    age(a, recent, 29);

    const report = await runHousekeeping(a.housekeeping);

    expect(report.workspaces).toBe(1);
    expect(existsSync(old.dir)).toBe(false);
    expect(existsSync(join(recent.dir, "src", "main.py"))).toBe(true);
  });

  it("keeps a workspace where another worker's background process runs, by that worker's heartbeat", async () => {
    const home = sharedHome();
    const a = worker(home);
    const b = worker(home);
    const ws = await usedWorkspace(b, "telegram:dm:7");
    const marker = startProcess(b, ws, "telegram:dm:7");
    // B's housekeeping with a heartbeat of 100 ms instead of minutes.
    const bWorkspaces = b.housekeeping.workspaces;
    if (!bWorkspaces) throw new Error("a worker's housekeeping prunes workspaces");
    cleanups.push(startHousekeeping({ ...b.housekeeping, workspaces: { ...bWorkspaces, heartbeatMs: 100 } }));
    await expectUsedWithin(a, ws, 60_000);
    // The turn that started it was long ago; the beats that follow say it is in use now.
    age(b, ws, 40);
    await expectUsedWithin(a, ws, 60_000);

    const report = await runHousekeeping(a.housekeeping);

    expect(report.workspaces).toBe(0);
    expect(existsSync(join(ws.dir, "src", "main.py"))).toBe(true);
    expect(processesWithArg(marker).length).toBeGreaterThan(0);

    // Once the process ended, nothing marks it: it goes when the retention has passed.
    await b.processes.killAll("telegram:dm:7");
    age(b, ws, 40);
    await new Promise((r) => setTimeout(r, 300));
    expect((await runHousekeeping(a.housekeeping)).workspaces).toBe(1);
    expect(existsSync(ws.dir)).toBe(false);
  });

  it("runs passes of three workers at once: each old workspace deleted once, the live and recent ones kept", async () => {
    const home = sharedHome();
    const workers = [worker(home), worker(home), worker(home)];
    const [a] = workers as [Worker, Worker, Worker];
    const old: string[] = [];
    for (let i = 0; i < 30; i++) {
      const ws = await usedWorkspace(a, `telegram:dm:${i}`);
      age(a, ws, 45);
      old.push(ws.dir);
    }
    const live = await usedWorkspace(a, "telegram:dm:live");
    const marker = startProcess(a, live, "telegram:dm:live");
    age(a, live, 45);
    const aWorkspaces = a.housekeeping.workspaces;
    if (!aWorkspaces) throw new Error("a worker's housekeeping prunes workspaces");
    // Only A's heartbeat: its pass would run now, beside the three below.
    cleanups.push(startWorkspaceHeartbeat({ ...aWorkspaces, heartbeatMs: 100 }, silentLogger()));
    await expectUsedWithin(a, live, 60_000);
    const recent = await usedWorkspace(a, "telegram:dm:recent");

    const deleted = await Promise.all(
      workers.map((w) => w.manager.prune(30 * DAY, (dir) => w.processes.isBusy(dir))),
    );

    const all = deleted.flat();
    expect(new Set(all).size).toBe(all.length);
    expect(all.sort()).toEqual([...old].sort());
    for (const dir of old) expect(existsSync(dir)).toBe(false);
    for (const ws of [live, recent]) expect(existsSync(join(ws.dir, "src", "main.py"))).toBe(true);
    expect(processesWithArg(marker).length).toBeGreaterThan(0);
    expect(readdirSync(join(home, "workspaces", ".trash"))).toEqual([]);
  });
});
