import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCommand } from "../../agent/exec/run.js";
import { SshBackend } from "../../agent/exec/ssh.js";
import type { Workspace } from "../../agent/exec/types.js";
import { workspaceDirName } from "../../agent/exec/workspaces.js";
import { chat, startHarness } from "../helpers/gateway-harness.js";
import { type PrivateSshd, startSshd } from "../helpers/sshd.js";
import {
  describeBackendContract,
  processesWithArg,
  tempWorkspace,
  uniqueSleep,
  until,
} from "./exec-contract.js";

let sshd: PrivateSshd;
beforeAll(async () => {
  sshd = await startSshd();
});
afterAll(async () => {
  await sshd?.stop();
});

/** A backend whose remote root is the workspace's parent: the remote workspace is the local folder. */
function backendFor(ws: Workspace, stateName: string): SshBackend {
  return new SshBackend({
    host: sshd.host,
    port: sshd.port,
    user: sshd.user,
    identityFile: sshd.identityFile,
    stateDir: join(sshd.dir, stateName),
    remoteRoot: dirname(ws.dir),
    killGraceMs: 500,
  });
}

describeBackendContract("ssh (real sshd on 127.0.0.1)", async (ws) => backendFor(ws, "c"));

describe("SshBackend", () => {
  it("creates the remote workspace on prepare and runs commands there", async () => {
    const ws = tempWorkspace();
    const remote = { key: ws.key, dir: join(dirname(ws.dir), "not-yet-there") };
    const backend = backendFor(ws, "p");
    try {
      expect(existsSync(remote.dir)).toBe(false);
      await backend.prepare(remote);
      expect(existsSync(remote.dir)).toBe(true);
      const result = await runCommand(backend, remote, { command: "pwd; echo $HOME; whoami" });
      expect(result.stdout).toBe(`${remote.dir}\n${remote.dir}\n${sshd.user}\n`);
    } finally {
      await backend.close();
      ws.cleanup();
    }
  });

  it("reuses one control connection: the ControlPath socket exists and the same master serves every command", async () => {
    const ws = tempWorkspace();
    const backend = backendFor(ws, "m");
    const masterPid = () =>
      new Promise<string>((resolve) => {
        execFile("ssh", [...backend.sshArgs(), "-O", "check", sshd.host], (_err, stdout, stderr) =>
          resolve(/Master running \(pid=(\d+)\)/.exec(stdout + stderr)?.[1] ?? "none"),
        );
      });
    try {
      await backend.prepare(ws);
      const sockets = readdirSync(join(sshd.dir, "m")).filter((name) => name.startsWith("cm-"));
      expect(sockets).toHaveLength(1);
      const before = await masterPid();
      expect(before).toMatch(/^\d+$/);
      for (let i = 0; i < 3; i++)
        expect((await runCommand(backend, ws, { command: "echo ok" })).stdout).toBe("ok\n");
      expect(await masterPid()).toBe(before);
      await backend.close();
      expect(await masterPid()).toBe("none");
    } finally {
      await backend.close();
      ws.cleanup();
    }
  });

  it("kills the remote command at the timeout", async () => {
    const ws = tempWorkspace();
    const backend = backendFor(ws, "k");
    try {
      await backend.prepare(ws);
      const marker = uniqueSleep();
      const result = await runCommand(backend, ws, {
        command: `sleep ${marker} & sleep ${marker}`,
        timeoutMs: 1_500,
        killGraceMs: 500,
      });
      expect(result.timedOut).toBe(true);
      // sshd runs on this machine, so the remote sleeps are visible in /proc.
      expect(await until(() => processesWithArg(marker).length === 0)).toBe(true);
    } finally {
      await backend.close();
      ws.cleanup();
    }
  });

  it("escalates to SIGKILL on the remote host when the command ignores SIGTERM, and cleans its pid file", async () => {
    const ws = tempWorkspace();
    const backend = backendFor(ws, "e");
    const pidFilesBefore = readdirSync("/tmp").filter((name) => /^herald-[0-9a-f]+\.pid$/.test(name));
    try {
      await backend.prepare(ws);
      const marker = uniqueSleep();
      const result = await runCommand(backend, ws, {
        command: `trap '' TERM; sleep ${marker}`,
        timeoutMs: 800,
        killGraceMs: 5_000,
      });
      expect(result.timedOut).toBe(true);
      expect(await until(() => processesWithArg(marker).length === 0)).toBe(true);
    } finally {
      await backend.close();
      ws.cleanup();
    }
    const pidFilesAfter = readdirSync("/tmp").filter((name) => /^herald-[0-9a-f]+\.pid$/.test(name));
    expect(pidFilesAfter.filter((name) => !pidFilesBefore.includes(name))).toEqual([]);
  });

  it("reports a refused key with the fix", async () => {
    const ws = tempWorkspace();
    const backend = new SshBackend({
      host: sshd.host,
      port: sshd.port,
      user: sshd.user,
      identityFile: join(sshd.dir, "host_key"), // a valid key that is not authorized
      stateDir: join(sshd.dir, "r"),
    });
    try {
      const availability = await backend.checkAvailable();
      expect(availability).toMatchObject({
        available: false,
        missing: expect.stringMatching(/Permission denied/),
      });
      expect(availability.available === false && availability.fix).toMatch(/authorized_keys/);
    } finally {
      await backend.close();
      ws.cleanup();
    }
  });
});

describe("the file tools on the ssh backend, through the gateway", () => {
  it("write_file, read_file and terminal work on the same remote workspace; nothing lands in the local one", async () => {
    const remoteRoot = mkdtempSync(join(tmpdir(), "herald-remote-"));
    const harness = await startHarness({
      configYaml: [
        "exec:",
        "  backend: ssh",
        "  ssh:",
        `    host: ${sshd.host}`,
        `    port: ${sshd.port}`,
        `    user: ${sshd.user}`,
        `    identity_file: ${sshd.identityFile}`,
        `    state_dir: ${join(sshd.dir, "gw")}`,
        `    remote_root: ${remoteRoot}`,
        "",
      ].join("\n"),
    });
    try {
      harness.llm.script(
        { toolCalls: [{ name: "write_file", arguments: { path: "notes/plan.txt", content: "step one\n" } }] },
        {
          toolCalls: [
            { name: "terminal", arguments: { command: "cat notes/plan.txt; echo two >> notes/plan.txt" } },
          ],
        },
        { toolCalls: [{ name: "read_file", arguments: { path: "notes/plan.txt" } }] },
        { text: "done" },
      );
      const reply = await chat(harness, "plan", { sessionId: "ssh-files" });
      expect(reply.text).toBe("done");
      const results = harness.llm.requests
        .at(-1)
        ?.messages.filter((m) => m.role === "tool")
        .map((m) => String(m.content ?? ""));
      expect(results?.[1]).toContain("step one");
      expect(results?.[2]).toMatch(/1\tstep one\n\s+2\ttwo/);
      const name = workspaceDirName("api:dm:ssh-files");
      expect(readFileSync(join(remoteRoot, name, "notes", "plan.txt"), "utf8")).toBe("step one\ntwo\n");
      expect(existsSync(join(harness.homeDir, "workspaces", name, "notes"))).toBe(false);
    } finally {
      await harness.stop();
      rmSync(remoteRoot, { recursive: true, force: true });
    }
  }, 60_000);
});
