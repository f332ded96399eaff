/**
 * The `ExecutionBackend` contract: the same cases run against every backend (local, sandbox, ssh,
 * docker), each on real processes. Backends here all run on this machine, so a test can look for
 * leftover processes in /proc by a unique argument.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCommand } from "../../agent/exec/run.js";
import type { ExecutionBackend, Workspace } from "../../agent/exec/types.js";

/** Pids of host processes whose command line contains `marker` as one argument. */
export function processesWithArg(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const args = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      if (args.includes(marker)) found.push(Number(name));
    } catch {
      // The process exited while we looked.
    }
  }
  return found;
}

/** A `sleep` duration nobody else uses, to find our processes in /proc. */
export function uniqueSleep(): string {
  return `${900 + Math.floor(Math.random() * 99)}.${process.pid}${Math.floor(Math.random() * 1e6)}`;
}

export async function until(check: () => boolean, timeoutMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return check();
}

/** A fresh workspace directory on the host. */
export function tempWorkspace(key = "telegram:123@contract"): Workspace & { cleanup(): void } {
  const root = mkdtempSync(join(tmpdir(), "herald-ws-"));
  const dir = join(root, "ws");
  mkdirSync(dir);
  return { key, dir, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/**
 * Registers the contract cases for one backend. `make` builds the backend for the test's workspace
 * (called once in beforeAll); the backend is prepared for it and closed afterwards.
 */
export function describeBackendContract(
  label: string,
  make: (ws: Workspace) => Promise<ExecutionBackend>,
): void {
  describe(`ExecutionBackend contract: ${label}`, () => {
    let backend: ExecutionBackend;
    let ws: ReturnType<typeof tempWorkspace>;

    beforeAll(async () => {
      ws = tempWorkspace();
      backend = await make(ws);
      await backend.prepare(ws);
      await backend.prepare(ws); // idempotent
    });
    afterAll(async () => {
      await backend?.close();
      ws?.cleanup();
    });

    it("is available", async () => {
      expect(await backend.checkAvailable()).toEqual({ available: true });
    });

    it("returns stdout, stderr and the exit code", async () => {
      const result = await runCommand(backend, ws, { command: "echo out; echo err >&2; exit 3" });
      expect(result).toMatchObject({ exitCode: 3, stdout: "out\n", stderr: "err\n", timedOut: false });
    });

    it("gives a minimal environment and never the gateway's process.env", async () => {
      process.env.HERALD_EXEC_TEST_SECRET = "sk-should-not-leak";
      try {
        const result = await runCommand(backend, ws, { command: "env", env: { EXTRA: "yes" } });
        expect(result.stdout).not.toContain("sk-should-not-leak");
        expect(result.stdout).toContain("EXTRA=yes");
        expect(result.stdout).toMatch(/^PATH=/m);
        expect(result.stdout).toMatch(/^HOME=/m);
      } finally {
        delete process.env.HERALD_EXEC_TEST_SECRET;
      }
    });

    it("runs in the workspace; a file written there appears on the host", async () => {
      const result = await runCommand(backend, ws, {
        command: "mkdir -p sub && echo hello > sub/f.txt && pwd",
      });
      expect(result.exitCode).toBe(0);
      expect(readFileSync(join(ws.dir, "sub", "f.txt"), "utf8")).toBe("hello\n");
      const inSub = await runCommand(backend, ws, { command: "cat f.txt", workdir: "sub" });
      expect(inSub.stdout).toBe("hello\n");
    });

    it("refuses a workdir outside the workspace", async () => {
      await expect(runCommand(backend, ws, { command: "pwd", workdir: "../.." })).rejects.toThrow(
        /outside the workspace/,
      );
    });

    it("feeds stdin", async () => {
      const result = await runCommand(backend, ws, { command: "cat", stdin: "from stdin" });
      expect(result.stdout).toBe("from stdin");
    });

    it("keeps the tail and a small head of long output and counts exactly what it dropped", async () => {
      const lines = Array.from({ length: 20_000 }, (_, i) => `${i + 1}\n`).join("");
      const result = await runCommand(backend, ws, { command: "seq 1 20000", maxOutputChars: 1_000 });
      expect(result.droppedChars).toBe(lines.length - 1_000);
      expect(result.stdout.startsWith("1\n2\n3\n")).toBe(true);
      expect(result.stdout.endsWith("19999\n20000\n")).toBe(true);
      expect(result.stdout).toContain(`${lines.length - 1_000} characters dropped`);
    });

    it("kills the whole process group at the timeout", async () => {
      const marker = uniqueSleep();
      const result = await runCommand(backend, ws, {
        command: `sleep ${marker} & sleep ${marker}`,
        timeoutMs: 1_000,
        killGraceMs: 500,
      });
      expect(result.timedOut).toBe(true);
      expect(await until(() => processesWithArg(marker).length === 0)).toBe(true);
    });

    it("files: writes whole files (folders made), stats and reads ranges; commands and files see each other", async () => {
      const files = backend.files(ws);
      expect(await files.write("f/deep/a.txt", Buffer.from("hello files"))).toEqual({
        created: true,
        previousBytes: 0,
        writtenBytes: 11,
      });
      expect(await files.stat("f/deep/a.txt")).toMatchObject({ kind: "file", sizeBytes: 11 });
      expect(await files.stat("f/deep")).toMatchObject({ kind: "directory" });
      expect(await files.stat("f/none")).toBeUndefined();
      expect(Buffer.from(await files.read("f/deep/a.txt", { offset: 6, length: 100 })).toString()).toBe(
        "files",
      );
      const seen = await runCommand(backend, ws, { command: "cat f/deep/a.txt; printf made > f/by-command" });
      expect(seen.stdout).toBe("hello files");
      expect(Buffer.from(await files.read("f/by-command", { offset: 0, length: 10 })).toString()).toBe(
        "made",
      );
      const chunks = (async function* () {
        for (let i = 0; i < 3; i++) yield Buffer.alloc(700_000, 97 + i);
      })();
      expect(await files.write("f/deep/a.txt", chunks)).toEqual({
        created: false,
        previousBytes: 11,
        writtenBytes: 2_100_000,
      });
      const tail = await files.read("f/deep/a.txt", { offset: 2_099_998, length: 10 });
      expect(Buffer.from(tail).toString()).toBe("cc");
      const listing = await runCommand(backend, ws, { command: "ls -a f/deep" });
      expect(listing.stdout.split("\n").filter((n) => n.endsWith(".tmp"))).toEqual([]);
    });

    it("files: keep the mode of a file they replace", async () => {
      const files = backend.files(ws);
      await runCommand(backend, ws, { command: "printf x > f/script.sh; chmod 750 f/script.sh" });
      await files.write("f/script.sh", Buffer.from("echo hi\n"));
      expect((await files.stat("f/script.sh"))?.mode).toBe(0o750);
    });

    it("files: refuse a link leading out of the workspace, a folder as a file, and say a file is missing", async () => {
      const files = backend.files(ws);
      await runCommand(backend, ws, { command: "ln -sf /etc f/etc-link; ln -sf /nonexistent/x f/dangling" });
      await expect(files.read("f/etc-link/passwd", { offset: 0, length: 10 })).rejects.toMatchObject({
        code: "invalid_input",
        message: expect.stringMatching(/outside the workspace/),
      });
      await expect(files.write("f/dangling", Buffer.from("x"))).rejects.toThrow(/outside the workspace/);
      await expect(files.write("f/deep", Buffer.from("x"))).rejects.toThrow(/is a directory/);
      await expect(files.read("f/missing.txt", { offset: 0, length: 1 })).rejects.toMatchObject({
        code: "not_found",
      });
    });

    it("cancels on abort and kills the command", async () => {
      const marker = uniqueSleep();
      const controller = new AbortController();
      const run = runCommand(backend, ws, { command: `sleep ${marker}`, signal: controller.signal });
      await until(() => processesWithArg(marker).length > 0);
      controller.abort();
      await expect(run).rejects.toMatchObject({ code: "turn_cancelled" });
      expect(await until(() => processesWithArg(marker).length === 0)).toBe(true);
    });
  });
}
