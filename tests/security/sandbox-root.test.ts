/**
 * A root gateway's sandbox: bubblewrap started by root maps the sandbox's user to root outside, so the
 * commands were root's processes (RLIMIT_NPROC skips root: only a pids cgroup held a fork bomb) and
 * wrote root's files. Now they run as an unprivileged uid outside; this is what the host sees. The
 * suite runs as root here; as an ordinary user there is nothing to prove (the sandbox is that user).
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCommand } from "../../agent/exec/run.js";
import { SandboxBackend } from "../../agent/exec/sandbox.js";
import { processesWithArg, tempWorkspace, uniqueSleep, until } from "../e2e/exec-contract.js";

/** The real, effective, saved and filesystem uids of `pid`, as the host sees them. */
function uidsOf(pid: number): number[] {
  const line = /^Uid:\s+(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? "";
  return line.trim().split(/\s+/).map(Number);
}

describe.skipIf(process.getuid?.() !== 0)("the sandbox of a root gateway, seen from the host", () => {
  const ws = tempWorkspace("telegram:1@root-sandbox");
  // No pids cgroup: the process limit must hold by RLIMIT_NPROC alone.
  const backend = new SandboxBackend({ pidsCgroup: false, limits: { maxProcesses: 64 } });
  beforeAll(() => backend.prepare(ws));
  afterAll(async () => {
    await backend.close();
    ws.cleanup();
  });

  it("runs a command as an unprivileged uid: its process and the file it makes are not root's", async () => {
    const marker = uniqueSleep();
    const proc = backend.spawn(ws, { command: `touch made-by-command; exec sleep ${marker}` });
    proc.stdout.resume();
    proc.stderr.resume();
    try {
      expect(await until(() => processesWithArg(marker).length > 0)).toBe(true);
      const [pid] = processesWithArg(marker);
      const uids = uidsOf(pid ?? 0);
      expect(uids).toHaveLength(4);
      expect(uids.filter((uid) => uid === 0)).toEqual([]);
      expect(statSync(join(ws.dir, "made-by-command")).uid).not.toBe(0);
    } finally {
      proc.kill("SIGKILL");
      await proc.exited;
    }
  });

  it("inside, the command is still uid 1000 in /workspace", async () => {
    const result = await runCommand(backend, ws, { command: "id -u; pwd" });
    expect(result.stdout).toBe("1000\n/workspace\n");
  });

  it("writes files through the file helper as that uid too", async () => {
    await backend.files(ws).write("made-by-helper.txt", Buffer.from("x"));
    expect(statSync(join(ws.dir, "made-by-helper.txt")).uid).not.toBe(0);
  });

  it("holds RLIMIT_NPROC without a pids cgroup: 150 background sleeps do not all start", async () => {
    const result = await runCommand(backend, ws, {
      command: "for i in $(seq 1 150); do sleep 2 & done; echo all-started",
      timeoutMs: 10_000,
    });
    expect(result.stderr).toMatch(/Cannot fork/);
    expect(result.stdout).not.toContain("all-started");
  });
});
