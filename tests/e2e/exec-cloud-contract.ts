/**
 * The cloud backends' cases, run against each provider's real SDK talking to its fake API on
 * 127.0.0.1 (`tests/fakes/<provider>/`). The fakes run commands on this host, so a test can look for
 * leftover processes in /proc, and a workspace's folder inside the "sandbox" is a host folder.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CloudBackend } from "../../agent/exec/cloud.js";
import { readSandboxRecord } from "../../agent/exec/cloud-records.js";
import { runCommand } from "../../agent/exec/run.js";
import type { Workspace } from "../../agent/exec/types.js";
import type { RunningFake } from "../fakes/sandbox-host/index.js";
import { processesWithArg, uniqueSleep, until } from "./exec-contract.js";

/** How a provider's suite builds its fake and backends. */
export interface CloudCase {
  start(): Promise<RunningFake>;
  /** A backend on `fake` whose workdir is `<root>/{workspace}`; `badKey` gives it a wrong key. */
  make(fake: RunningFake, root: string, options?: { idleStopMs?: number; badKey?: boolean }): CloudBackend;
}

/** Registers the cloud cases for one provider. */
export function describeCloudBackend(label: string, c: CloudCase): void {
  describe(`CloudBackend: ${label}`, () => {
    let fake: RunningFake;
    let root: string;
    let n = 0;
    const workspace = (): Workspace => ({ key: `telegram:${++n}`, dir: join(root, `ws-${n}`) });

    beforeAll(async () => {
      fake = await c.start();
      root = mkdtempSync(join(tmpdir(), "herald-cloud-"));
    });
    afterAll(async () => {
      await fake?.stop();
      rmSync(root, { recursive: true, force: true });
    });

    it("checks the key live: available with it, a clear refusal without", async () => {
      expect(await c.make(fake, root).checkAvailable()).toEqual({ available: true });
      const bad = await c.make(fake, root, { badKey: true }).checkAvailable();
      expect(bad).toMatchObject({
        available: false,
        fix: expect.stringMatching(/refused the key \((401|403)\)/),
      });
    });

    it("makes the sandbox on first use and runs commands there: output, exit code, env, workdir, stdin", async () => {
      const backend = c.make(fake, root);
      const ws = workspace();
      const before = fake.host.alive().length;
      await backend.prepare(ws);
      expect(fake.host.alive().length).toBe(before + 1);
      expect((await readSandboxRecord(ws.dir))?.id).toBeTruthy();
      const result = await runCommand(backend, ws, { command: "echo out; echo err >&2; exit 3" });
      expect(result).toMatchObject({ exitCode: 3, stdout: "out\n", stderr: "err\n", timedOut: false });
      process.env.HERALD_CLOUD_TEST_SECRET = "sk-should-not-leak";
      const env = await runCommand(backend, ws, { command: "env", env: { EXTRA: "yes" } });
      delete process.env.HERALD_CLOUD_TEST_SECRET;
      expect(env.stdout).not.toContain("sk-should-not-leak");
      expect(env.stdout).toMatch(/^EXTRA=yes$/m);
      expect(env.stdout).toMatch(new RegExp(`^HOME=${ws.dir}$`, "m"));
      await runCommand(backend, ws, { command: "mkdir -p sub && echo hi > sub/f.txt" });
      expect((await runCommand(backend, ws, { command: "cat f.txt; pwd", workdir: "sub" })).stdout).toBe(
        `hi\n${ws.dir}/sub\n`,
      );
      await expect(runCommand(backend, ws, { command: "pwd", workdir: "../.." })).rejects.toThrow(
        /outside the workspace/,
      );
      expect((await runCommand(backend, ws, { command: "cat", stdin: "from stdin" })).stdout).toBe(
        "from stdin",
      );
      const lines = Array.from({ length: 20_000 }, (_, i) => `${i + 1}\n`).join("");
      const long = await runCommand(backend, ws, { command: "seq 1 20000", maxOutputChars: 1_000 });
      expect(long.droppedChars).toBe(lines.length - 1_000);
      expect(long.stdout.endsWith("19999\n20000\n")).toBe(true);
      await backend.close();
    });

    it("kills the command's whole process group in the sandbox at the timeout and on abort", async () => {
      const backend = c.make(fake, root);
      const ws = workspace();
      const marker = uniqueSleep();
      const result = await runCommand(backend, ws, {
        command: `sleep ${marker} & sleep ${marker}`,
        timeoutMs: 1_000,
        killGraceMs: 500,
      });
      expect(result.timedOut).toBe(true);
      expect(await until(() => processesWithArg(marker).length === 0)).toBe(true);
      const other = uniqueSleep();
      const controller = new AbortController();
      const run = runCommand(backend, ws, { command: `sleep ${other}`, signal: controller.signal });
      expect(await until(() => processesWithArg(other).length > 0)).toBe(true);
      controller.abort();
      await expect(run).rejects.toMatchObject({ code: "turn_cancelled" });
      expect(await until(() => processesWithArg(other).length === 0)).toBe(true);
      await backend.close();
    });

    it("files go through the provider's file API: write (parents made, mode kept), stat, read a range, errors", async () => {
      const backend = c.make(fake, root);
      const ws = workspace();
      await backend.prepare(ws);
      const files = backend.files(ws);
      expect(await files.write("f/deep/a.txt", Buffer.from("hello files"))).toEqual({
        created: true,
        previousBytes: 0,
        writtenBytes: 11,
      });
      expect(readFileSync(join(ws.dir, "f/deep/a.txt"), "utf8")).toBe("hello files");
      expect(await files.stat("f/deep/a.txt")).toMatchObject({ kind: "file", sizeBytes: 11, mode: 0o644 });
      expect(await files.stat("f/deep")).toMatchObject({ kind: "directory" });
      expect(await files.stat("f/none")).toBeUndefined();
      expect(Buffer.from(await files.read("f/deep/a.txt", { offset: 6, length: 100 })).toString()).toBe(
        "files",
      );
      await runCommand(backend, ws, { command: "printf x > f/s.sh; chmod 750 f/s.sh" });
      expect(await files.write("f/s.sh", Buffer.from("echo hi\n"))).toMatchObject({
        created: false,
        previousBytes: 1,
      });
      expect((await files.stat("f/s.sh"))?.mode).toBe(0o750);
      expect((await runCommand(backend, ws, { command: "sh f/s.sh; ls -a f" })).stdout).not.toMatch(/\.tmp/);
      await expect(files.write("f/deep", Buffer.from("x"))).rejects.toThrow(/is a directory/);
      await expect(files.read("f/missing.txt", { offset: 0, length: 1 })).rejects.toMatchObject({
        code: "not_found",
      });
      await backend.close();
    });

    it("pauses an idle sandbox and resumes it with its files on the next use", async () => {
      const backend = c.make(fake, root, { idleStopMs: 300 });
      const ws = workspace();
      await runCommand(backend, ws, { command: "echo kept > note.txt" });
      const id = (await readSandboxRecord(ws.dir))!.id;
      const sandbox = fake.host.find(id)!;
      expect(await until(() => sandbox.state === "stopped", 5_000)).toBe(true);
      let record = await readSandboxRecord(ws.dir);
      for (let i = 0; i < 50 && record?.runningSince !== undefined; i++) {
        await new Promise((r) => setTimeout(r, 50));
        record = await readSandboxRecord(ws.dir);
      }
      expect(record?.id).toBe(id);
      expect(record?.runningSince).toBeUndefined();
      expect(record?.runningMs).toBeGreaterThan(0);
      expect((await runCommand(backend, ws, { command: "cat note.txt" })).stdout).toBe("kept\n");
      expect(sandbox).toMatchObject({ state: "running", starts: 2, stops: 1 });
      await backend.close();
      expect(sandbox.state).toBe("stopped");
    });

    it("a restarted gateway resumes the recorded sandbox rather than making another", async () => {
      const ws = workspace();
      const first = c.make(fake, root);
      await runCommand(first, ws, { command: "true" });
      await first.close();
      const count = fake.host.sandboxes.size;
      const second = c.make(fake, root);
      expect((await runCommand(second, ws, { command: "echo again" })).stdout).toBe("again\n");
      expect(fake.host.sandboxes.size).toBe(count);
      await second.close();
    });

    it("retries calls the provider answers 429, with backoff: a paused sandbox resumes through them", async () => {
      const ws = workspace();
      const first = c.make(fake, root);
      await runCommand(first, ws, { command: "echo before > kept.txt" });
      await first.close(); // paused: the next use goes through the provider's control API
      const backend = c.make(fake, root);
      const seen = fake.host.requests.length;
      fake.host.rateLimitNext(2);
      expect((await runCommand(backend, ws, { command: "cat kept.txt" })).stdout).toBe("before\n");
      expect(fake.host.requests.slice(seen).filter((r) => r.status === 429).length).toBe(2);
      await backend.close();
    });

    it("a lost sandbox (404) is made anew and the agent is told its files are gone", async () => {
      const backend = c.make(fake, root);
      const ws = workspace();
      await runCommand(backend, ws, { command: "echo old > old.txt" });
      const lost = (await readSandboxRecord(ws.dir))!.id;
      fake.host.lose(lost);
      rmSync(ws.dir, { recursive: true, force: true }); // what the provider's deletion did to the files
      const result = await runCommand(backend, ws, { command: "ls; echo fresh" });
      expect(result.stderr).toMatch(/sandbox was deleted outside Herald.*files written before are gone/);
      expect(result.stdout).toBe("fresh\n");
      const now = (await readSandboxRecord(ws.dir))!.id;
      expect(now).not.toBe(lost);
      expect(fake.host.find(now)?.state).toBe("running");
      expect((await runCommand(backend, ws, { command: "echo quiet" })).stderr).toBe("");
      await backend.close();
    });

    it("release (the session ended) deletes the sandbox and its record", async () => {
      const backend = c.make(fake, root);
      const ws = workspace();
      await runCommand(backend, ws, { command: "true" });
      const id = (await readSandboxRecord(ws.dir))!.id;
      await backend.release(ws);
      expect(fake.host.find(id)).toBeUndefined();
      expect(await readSandboxRecord(ws.dir)).toBeUndefined();
      expect(existsSync(join(root, ".sandboxes", `ws-${n}.json`))).toBe(false);
      await backend.close();
    });
  });
}
