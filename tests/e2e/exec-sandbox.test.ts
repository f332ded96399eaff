import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCommand, terminate } from "../../agent/exec/run.js";
import { SandboxBackend } from "../../agent/exec/sandbox.js";
import {
  describeBackendContract,
  processesWithArg,
  tempWorkspace,
  uniqueSleep,
  until,
} from "./exec-contract.js";

describeBackendContract("sandbox (bubblewrap)", async () => new SandboxBackend());

describe("SandboxBackend", () => {
  const ws = tempWorkspace("slack:T1:U2@sandbox");
  let server: Server;
  let port = 0;
  const backend = new SandboxBackend({ limits: { maxProcesses: 64, memoryBytes: 160 * 1024 * 1024 } });

  beforeAll(async () => {
    await backend.prepare(ws);
    server = createServer((socket) => socket.end("hello from the host\n"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    port = typeof address === "object" && address ? address.port : 0;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    ws.cleanup();
  });

  it("refuses writes outside the workspace: /usr, /etc and the host's home are not writable", async () => {
    const hostHome = join(homedir(), `herald-sandbox-escape-${process.pid}`);
    const result = await runCommand(backend, ws, {
      command: `touch /usr/x; echo usr=$?; touch /etc/x; echo etc=$?; touch ${hostHome}; echo home=$?`,
    });
    expect(result.stdout).toMatch(/usr=1/);
    expect(result.stdout).toMatch(/etc=1/);
    expect(result.stdout).toMatch(/home=1/);
    expect(existsSync("/usr/x") || existsSync("/etc/x") || existsSync(hostHome)).toBe(false);
  });

  it("sees the workspace at /workspace, writable, with the file on the host; /tmp is private", async () => {
    const result = await runCommand(backend, ws, {
      command: "pwd; echo inside > made-in-sandbox.txt; echo t > /tmp/private-tmp; ls /tmp",
    });
    expect(result.stdout.split("\n")[0]).toBe("/workspace");
    expect(readFileSync(join(ws.dir, "made-in-sandbox.txt"), "utf8")).toBe("inside\n");
    expect(existsSync("/tmp/private-tmp")).toBe(false);
  });

  it("hides secrets of /etc (shadow) even though /etc is readable", async () => {
    const result = await runCommand(backend, ws, {
      command: "cat /etc/shadow; echo rc=$?; head -c 4 /etc/passwd",
    });
    expect(result.stdout).not.toMatch(/^root:/m);
    expect(result.stdout).toMatch(/rc=1\nroot$/);
  });

  const connect = (p: number) =>
    `python3 -c "import socket; s=socket.create_connection(('127.0.0.1', ${p}), 2); print(s.recv(100).decode().strip())"`;

  it("has no network by default: a TCP server on the host's 127.0.0.1 is unreachable", async () => {
    const result = await runCommand(backend, ws, { command: connect(port) });
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toMatch(/ConnectionRefused|Network is unreachable|refused/);
  });

  it("reaches the network when allowed", async () => {
    const open = new SandboxBackend({ networkAllowed: true });
    const result = await runCommand(open, ws, { command: connect(port) });
    expect(result.stdout.trim()).toBe("hello from the host");
  });

  // Commands never run as root outside (a root gateway runs them as an unprivileged uid), so
  // RLIMIT_NPROC binds everywhere; a pids cgroup per command adds to it where the gateway can make one.
  const limit = backend.processLimit();

  it("says how commands are bounded: a pids cgroup where there is one, the uid outside for a root gateway", () => {
    if (process.getuid?.() === 0) expect(limit.runsAs).toEqual({ uid: 65534, gid: 65534 });
    else expect(limit.runsAs).toBeUndefined();
  });

  it("stops a command at the process limit (64): 150 background sleeps do not all start", async () => {
    const result = await runCommand(backend, ws, {
      command: "for i in $(seq 1 150); do sleep 2 & done; echo all-started",
      timeoutMs: 10_000,
    });
    expect(result.stderr).toMatch(/Cannot fork/);
    expect(result.stdout).not.toContain("all-started");
  });

  it("contains a fork bomb with the process limit; the test process stays healthy", async () => {
    const result = await runCommand(backend, ws, {
      command: "bomb() { bomb | bomb & }; bomb; sleep 1; echo survived",
      timeoutMs: 4_000,
      killGraceMs: 200,
    });
    expect(result.timedOut || result.exitCode !== null).toBe(true);
    const after = await runCommand(backend, ws, { command: "echo healthy" });
    expect(after.stdout).toBe("healthy\n");
  });

  it.skipIf(limit.cgroupDir === undefined)(
    "runs each command in a pids cgroup of its own, and close() removes them",
    async () => {
      const own = new SandboxBackend({ limits: { maxProcesses: 64 } });
      await own.checkAvailable();
      const pidsCgroupOf = (pid: number | undefined) =>
        readFileSync(`/proc/${pid}/cgroup`, "utf8").match(/^\d+:(?:[^:]*,)?pids(?:,[^:]*)?:(.*)$/m)?.[1] ??
        readFileSync(`/proc/${pid}/cgroup`, "utf8").match(/^0::(.*)$/m)?.[1];
      const first = own.spawn(ws, { command: "sleep 1" });
      const second = own.spawn(ws, { command: "sleep 1" });
      // A shell made ready at checkAvailable() is already inside; one started now enters in a moment.
      const inside = (pid: number | undefined) => /herald-sbx-/.test(pidsCgroupOf(pid) ?? "");
      expect(await until(() => inside(first.pid) && inside(second.pid))).toBe(true);
      const [a, b] = [pidsCgroupOf(first.pid), pidsCgroupOf(second.pid)];
      expect(a).toMatch(/herald-sbx-/);
      expect(b).toMatch(/herald-sbx-/);
      expect(a).not.toBe(b);
      await Promise.all([first.exited, second.exited]);
      await own.close();
      const dir = limit.cgroupDir ?? "";
      const ours = () => readdirSync(dir).filter((n) => n.startsWith(`herald-sbx-${process.pid}-`));
      // The shared backend of this file keeps its own idle ones: only this backend's must be gone.
      expect(await until(() => !ours().some((n) => a?.endsWith(n) || b?.endsWith(n)))).toBe(true);
    },
  );

  it("contains a memory hog with the address-space limit", async () => {
    const result = await runCommand(backend, ws, {
      command: [
        "python3 -c 'x = bytearray(2 * 1024**3); print(len(x))'; echo big=$?",
        "python3 -c 'x = []\nwhile True: x.append(bytearray(16 * 1024**2))'; echo grow=$?",
      ].join("; "),
      timeoutMs: 10_000,
    });
    expect(result.stderr).toContain("MemoryError");
    expect(result.stdout).toMatch(/big=1\ngrow=1/);
    expect(process.memoryUsage().rss).toBeLessThan(1024 * 1024 * 1024);
  });

  it("kills a hung command at its timeout together with its process group", async () => {
    const marker = uniqueSleep();
    const result = await runCommand(backend, ws, {
      command: `(sleep ${marker} &) ; sleep ${marker}`,
      timeoutMs: 800,
      killGraceMs: 300,
    });
    expect(result.timedOut).toBe(true);
    expect(await until(() => processesWithArg(marker).length === 0)).toBe(true);
  });

  // bwrap's init runs the command in a session of its own: a kill aimed at the monitor's group alone
  // missed it, and a monitor killed before its child armed --die-with-parent left the sandbox running
  // with nobody to stop it (a killed `sleep 600` ran on).
  it("a kill right after the start, or later, leaves no process of the sandbox running", async () => {
    for (const pidsCgroup of [true, false]) {
      const own = new SandboxBackend({ pidsCgroup });
      await own.checkAvailable();
      for (const delayMs of [0, 0, 1, 5, 20, 100]) {
        const marker = uniqueSleep();
        const proc = own.spawn(ws, { command: `sleep ${marker}` });
        proc.stdout.resume();
        proc.stderr.resume();
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        await terminate(proc, 1_000);
        expect(await until(() => processesWithArg(marker).length === 0, 3_000)).toBe(true);
      }
      await own.close();
    }
  });

  it.skipIf(limit.cgroupDir === undefined)(
    "still runs commands after a /tmp cleaner removed the launcher's script directory",
    async () => {
      const own = new SandboxBackend();
      await own.checkAvailable();
      expect((await runCommand(own, ws, { command: "echo one" })).stdout).toBe("one\n");
      // The directory is private to the backend: reach it the way a cleaner would, by its path.
      const dir = (own as unknown as { launcher: { scriptDir: string } }).launcher.scriptDir;
      rmSync(dir, { recursive: true, force: true });
      expect((await runCommand(own, ws, { command: "echo two" })).stdout).toBe("two\n");
      await own.close();
    },
  );

  it.skipIf(limit.cgroupDir === undefined)(
    "a gateway process that closes its backend leaves no cgroup, script or script directory behind",
    async () => {
      const root = join(import.meta.dirname, "..", "..");
      const script = `
        const { SandboxBackend } = await import(${JSON.stringify(join(root, "agent", "exec", "sandbox.ts"))});
        const { runCommand } = await import(${JSON.stringify(join(root, "agent", "exec", "run.ts"))});
        const backend = new SandboxBackend();
        await backend.checkAvailable();
        const ws = { key: "leftovers", dir: ${JSON.stringify(ws.dir)} };
        for (const word of ["one", "two"]) console.log((await runCommand(backend, ws, { command: "echo " + word })).stdout.trim());
        await backend.close();
        console.log("pid", process.pid);
      `;
      const output = await new Promise<string>((resolve, reject) =>
        execFile(
          process.execPath,
          ["--import", "tsx", "--input-type=module", "-e", script],
          { cwd: root, timeout: 30_000 },
          (err, stdout, stderr) => (err ? reject(new Error(stderr || err.message)) : resolve(stdout)),
        ),
      );
      const childPid = /^pid (\d+)$/m.exec(output)?.[1];
      expect(output).toMatch(/^one\ntwo\n/);
      expect(childPid).toBeDefined();
      const left = [
        ...readdirSync(limit.cgroupDir ?? "").filter((n) => n.startsWith(`herald-sbx-${childPid}-`)),
        ...readdirSync(tmpdir()).filter((n) => n.startsWith(`herald-sandbox-launch-${childPid}-`)),
      ];
      expect(left).toEqual([]);
    },
  );

  it("reports a missing bwrap with the fix", async () => {
    const missing = new SandboxBackend({ bwrapPath: "/nonexistent/bwrap" });
    expect(await missing.checkAvailable()).toEqual({
      available: false,
      missing: "bubblewrap (bwrap) is not installed at /nonexistent/bwrap",
      fix: expect.stringContaining("apt-get install bubblewrap"),
    });
  });
});
