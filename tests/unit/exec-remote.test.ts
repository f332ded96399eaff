/**
 * The scripts `SshBackend` and `DockerBackend` run on the other side, run here with the local /bin/sh:
 * the pid file names the command's process group and the kill script ends that whole group, with and
 * without `setsid -w` (docker exec's path, which no engine on this machine can exercise end to end).
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { remoteKillScript, remoteRunScript } from "../../agent/exec/remote.js";
import { processesWithArg, uniqueSleep, until } from "../e2e/exec-contract.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "herald-remote-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function run(script: string, detached: boolean) {
  const child = spawn("/bin/sh", ["-c", script], { detached, env: { PATH: "/usr/bin:/bin" }, cwd: dir });
  let stdout = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  return { child, exited, stdout: () => stdout };
}

describe.each([
  { label: "session leader (ssh)", newSession: false, detached: true },
  { label: "setsid -w (docker exec)", newSession: true, detached: false },
])("remote scripts: $label", ({ newSession, detached }) => {
  it("runs in the workspace with exactly the given environment and returns the exit code", async () => {
    process.env.HERALD_REMOTE_SECRET = "leak";
    try {
      const script = remoteRunScript({
        pidFile: join(dir, "p.pid"),
        root: dir,
        cwd: dir,
        env: { PATH: "/usr/bin:/bin", X: "it's quoted" },
        command: 'pwd; echo "$HOME|$X|$HERALD_REMOTE_SECRET"; exit 7',
        newSession,
      });
      const proc = run(script, detached);
      expect(await proc.exited).toBe(7);
      expect(proc.stdout()).toBe(`${dir}\n${dir}|it's quoted|\n`);
      expect(existsSync(join(dir, "p.pid"))).toBe(false);
    } finally {
      delete process.env.HERALD_REMOTE_SECRET;
    }
  });

  it("records the process group so the kill script ends the command and its children", async () => {
    const marker = uniqueSleep();
    const pidFile = join(dir, "k.pid");
    const proc = run(
      remoteRunScript({
        pidFile,
        root: dir,
        cwd: dir,
        env: {},
        command: `sleep ${marker} & sleep ${marker}`,
        newSession,
      }),
      detached,
    );
    expect(await until(() => processesWithArg(marker).length === 2)).toBe(true);
    const pgid = Number(readFileSync(pidFile, "utf8"));
    const stat = readFileSync(`/proc/${processesWithArg(marker)[0]}/stat`, "utf8");
    expect(Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2])).toBe(pgid);
    const killer = run(remoteKillScript(pidFile, "SIGTERM"), false);
    await killer.exited;
    expect(await until(() => processesWithArg(marker).length === 0)).toBe(true);
    await proc.exited;
    expect(existsSync(pidFile)).toBe(false);
  });

  it("escalates to SIGKILL after the grace when the command ignores SIGTERM", async () => {
    const marker = uniqueSleep();
    const pidFile = join(dir, "e.pid");
    const command = `trap '' TERM; sleep ${marker}`;
    const proc = run(
      remoteRunScript({ pidFile, root: dir, cwd: dir, env: {}, command, newSession }),
      detached,
    );
    expect(await until(() => processesWithArg(marker).length === 1)).toBe(true);
    await run(remoteKillScript(pidFile, "SIGTERM", 300), false).exited;
    expect(await until(() => processesWithArg(marker).length === 0)).toBe(true);
    expect(existsSync(pidFile)).toBe(false);
    await proc.exited;
  });

  it("refuses an environment variable name that env(1) would misread", () => {
    expect(() =>
      remoteRunScript({
        pidFile: "/tmp/x",
        root: dir,
        cwd: dir,
        env: { "-u": "x" },
        command: "true",
        newSession,
      }),
    ).toThrow(/not a valid environment variable name/);
  });
});
