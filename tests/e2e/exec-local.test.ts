import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { LocalBackend } from "../../agent/exec/local.js";
import { runCommand } from "../../agent/exec/run.js";
import {
  describeBackendContract,
  processesWithArg,
  tempWorkspace,
  uniqueSleep,
  until,
} from "./exec-contract.js";

describeBackendContract("local", async () => new LocalBackend());

/** `kill -0` succeeds, and the process is not a zombie waiting for this machine's init to reap it. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

describe("LocalBackend", () => {
  it("kills a `sleep 1000 & sleep 1000` child tree at the timeout (kill -0 on the recorded pids)", async () => {
    const ws = tempWorkspace();
    const backend = new LocalBackend();
    try {
      const result = await runCommand(backend, ws, {
        command: "sleep 1000 & echo $!; sh -c 'echo $$; exec sleep 1000'",
        timeoutMs: 1_000,
        killGraceMs: 500,
      });
      const pids = result.stdout.trim().split("\n").map(Number);
      expect(pids).toHaveLength(2);
      expect(result.timedOut).toBe(true);
      expect(result.signal).toBe("SIGTERM");
      expect(await until(() => pids.every((pid) => !alive(pid)))).toBe(true);
    } finally {
      ws.cleanup();
    }
  });

  it("kills background children a foreground command leaves behind when it exits", async () => {
    const ws = tempWorkspace();
    try {
      const marker = uniqueSleep();
      const result = await runCommand(new LocalBackend(), ws, { command: `sleep ${marker} & echo started` });
      expect(result).toMatchObject({ exitCode: 0, stdout: "started\n", timedOut: false });
      expect(await until(() => processesWithArg(marker).length === 0)).toBe(true);
    } finally {
      ws.cleanup();
    }
  });

  it("escalates to SIGKILL after the grace when SIGTERM is ignored", async () => {
    const ws = tempWorkspace();
    try {
      const result = await runCommand(new LocalBackend(), ws, {
        command: "trap '' TERM; echo ready; sleep 5",
        timeoutMs: 500,
        killGraceMs: 300,
      });
      expect(result.timedOut).toBe(true);
      expect(result.signal).toBe("SIGKILL");
    } finally {
      ws.cleanup();
    }
  });

  it("reports a missing shell as exit code 127", async () => {
    const ws = tempWorkspace();
    try {
      const result = await runCommand(new LocalBackend({ shell: "/nonexistent/sh" }), ws, {
        command: "true",
      });
      expect(result.exitCode).toBe(127);
      expect(result.stderr).toContain("cannot start /nonexistent/sh");
    } finally {
      ws.cleanup();
    }
  });
});
