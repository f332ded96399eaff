import { existsSync, utimesSync } from "node:fs";
import { dirname } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LocalBackend } from "../../agent/exec/local.js";
import { type ProcessInfo, ProcessRegistry } from "../../agent/exec/processes.js";
import { WorkspaceManager } from "../../agent/exec/workspaces.js";
import { processesWithArg, tempWorkspace, uniqueSleep, until } from "./exec-contract.js";

describe("ProcessRegistry", () => {
  let ws: ReturnType<typeof tempWorkspace>;
  let registry: ProcessRegistry;
  let exits: ProcessInfo[];

  beforeEach(() => {
    ws = tempWorkspace();
    exits = [];
    registry = new ProcessRegistry({
      backend: new LocalBackend(),
      killGraceMs: 300,
      onExit: (info) => {
        exits.push(info);
      },
    });
  });
  afterEach(async () => {
    await registry.closeAll();
    ws.cleanup();
  });

  it("starts at once, lists the process as running, then exited with its code, and fires onExit", async () => {
    const started = registry.start("s1", ws, { command: "sleep 0.3; exit 4" });
    expect(started).toMatchObject({ status: "running", command: "sleep 0.3; exit 4", exitCode: null });
    expect(registry.list("s1").map((p) => p.id)).toEqual([started.id]);
    const done = await registry.wait("s1", started.id, 5_000);
    expect(done).toMatchObject({ status: "exited", exitCode: 4 });
    expect(done.runtimeMs).toBeGreaterThanOrEqual(250);
    await until(() => exits.length === 1);
    expect(exits[0]).toMatchObject({ id: started.id, exitCode: 4, status: "exited" });
  });

  it("poll returns only the output written since the previous poll", async () => {
    const p = registry.start("s1", ws, { command: "echo one; read x; echo two; read y; echo three" });
    await until(() => registry.readLog("s1", p.id).totalChars >= 4);
    expect(registry.poll("s1", p.id).output).toBe("one\n");
    expect(registry.poll("s1", p.id).output).toBe("");
    await registry.write("s1", p.id, "go\n");
    await until(() => registry.readLog("s1", p.id).totalChars >= 8);
    expect(registry.poll("s1", p.id).output).toBe("two\n");
    await registry.write("s1", p.id, "go\n", true);
    const info = await registry.wait("s1", p.id, 5_000);
    expect(info.status).toBe("exited");
    expect(registry.poll("s1", p.id)).toMatchObject({ output: "three\n", droppedChars: 0 });
  });

  it("writes to stdin (cat echoes it back)", async () => {
    const p = registry.start("s1", ws, { command: "cat" });
    await registry.write("s1", p.id, "hello cat\n");
    await until(() => registry.readLog("s1", p.id).text.includes("hello cat"));
    expect(registry.poll("s1", p.id).output).toBe("hello cat\n");
    await registry.write("s1", p.id, "", true);
    expect(await registry.wait("s1", p.id, 5_000)).toMatchObject({ status: "exited", exitCode: 0 });
    await expect(registry.write("s1", p.id, "late")).rejects.toMatchObject({ code: "invalid_input" });
  });

  it("wait returns the running status at its timeout; kill ends the whole process group", async () => {
    const marker = uniqueSleep();
    const p = registry.start("s1", ws, { command: `sleep ${marker} & sleep ${marker}` });
    expect(await registry.wait("s1", p.id, 200)).toMatchObject({ status: "running" });
    await until(() => processesWithArg(marker).length === 2);
    const killed = await registry.kill("s1", p.id);
    expect(killed).toMatchObject({ status: "exited", signal: "SIGTERM" });
    expect(await until(() => processesWithArg(marker).length === 0)).toBe(true);
    expect(exits.map((e) => e.id)).toContain(p.id);
  });

  it("keeps processes per owner: another session cannot see or touch them; killAll ends one owner's", async () => {
    const a = registry.start("telegram:1", ws, { command: "sleep 30" });
    const b = registry.start("discord:2", ws, { command: "sleep 30" });
    expect(registry.list("telegram:1").map((p) => p.id)).toEqual([a.id]);
    expect(() => registry.poll("discord:2", a.id)).toThrow(/no background process/);
    await registry.killAll("telegram:1");
    expect(registry.list("telegram:1")).toEqual([]);
    expect(registry.list("discord:2")).toMatchObject([{ id: b.id, status: "running" }]);
  });

  it("isBusy is true while a process runs in the workspace", async () => {
    const p = registry.start("s1", ws, { command: "sleep 30" });
    expect(registry.isBusy(ws.dir)).toBe(true);
    expect(registry.isBusy(`${ws.dir}-other`)).toBe(false);
    await registry.kill("s1", p.id);
    expect(registry.isBusy(ws.dir)).toBe(false);
  });

  it("workspace pruning skips a workspace where a process runs", async () => {
    const manager = new WorkspaceManager({ rootDir: dirname(ws.dir) });
    const longAgo = new Date(Date.now() - 3_600_000);
    utimesSync(ws.dir, longAgo, longAgo);
    const p = registry.start("s1", ws, { command: "sleep 30" });
    expect(await manager.prune(60_000, (dir) => registry.isBusy(dir))).toEqual([]);
    expect(existsSync(ws.dir)).toBe(true);
    await registry.kill("s1", p.id);
    expect(await manager.prune(60_000, (dir) => registry.isBusy(dir))).toEqual([ws.dir]);
  });

  it("pages the log by offset and limit and caps it as a ring, reporting what was dropped", async () => {
    const small = new ProcessRegistry({ backend: new LocalBackend(), maxLogChars: 1_000 });
    try {
      const p = small.start("s1", ws, { command: "seq 1 2000" });
      await small.wait("s1", p.id, 5_000);
      const total = Array.from({ length: 2000 }, (_, i) => `${i + 1}\n`).join("");
      const first = small.readLog("s1", p.id, 0, 100);
      expect(first.totalChars).toBe(total.length);
      expect(first.firstKeptOffset).toBe(total.length - 1_000);
      expect(first.offset).toBe(total.length - 1_000);
      expect(first.text).toBe(total.slice(total.length - 1_000, total.length - 900));
      const next = small.readLog("s1", p.id, first.nextOffset, 100);
      expect(next.text).toBe(total.slice(total.length - 900, total.length - 800));
      const polled = small.poll("s1", p.id);
      expect(polled.droppedChars).toBe(total.length - 1_000);
      expect(polled.output.endsWith("1999\n2000\n")).toBe(true);
    } finally {
      await small.closeAll();
    }
  });

  it("an onExit callback that throws does not break the registry", async () => {
    const throwing = new ProcessRegistry({
      backend: new LocalBackend(),
      onExit: () => {
        throw new Error("notifier down");
      },
    });
    const p = throwing.start("s1", ws, { command: "true" });
    expect(await throwing.wait("s1", p.id, 5_000)).toMatchObject({ status: "exited", exitCode: 0 });
    await throwing.closeAll();
  });
});
