/**
 * The sandbox as an ordinary user runs it (the deployment the README recommends): no pids cgroup, and
 * RLIMIT_NPROC alone stops a command at the process limit. The suite runs as root here, so the check
 * runs in a child process that `setpriv` turns into `nobody` (skipped where nobody cannot read the
 * checkout); a suite run as an ordinary user proves the same with exec-sandbox.test.ts directly.
 */
import { execFile, spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const asRoot = process.getuid?.() === 0;
/** `nobody` must be able to read the checkout (not so under a 0700 home such as /root). */
const nobodyReads =
  asRoot &&
  spawnSync("setpriv", [
    "--reuid=65534",
    "--regid=65534",
    "--clear-groups",
    "test",
    "-r",
    join(root, "node_modules", "tsx", "package.json"),
  ]).status === 0;

/** Runs `command` in a SandboxBackend (limit 64 processes) inside a node process of uid/gid 65534. */
function runAsNobody(
  dir: string,
  command: string,
): Promise<{ limit: unknown; stdout: string; stderr: string }> {
  const script = `
    const { SandboxBackend } = await import(${JSON.stringify(join(root, "agent", "exec", "sandbox.ts"))});
    const { runCommand } = await import(${JSON.stringify(join(root, "agent", "exec", "run.ts"))});
    const backend = new SandboxBackend({ limits: { maxProcesses: 64 } });
    const ws = { key: "nobody", dir: ${JSON.stringify(join(dir, "ws"))} };
    await backend.prepare(ws);
    const r = await runCommand(backend, ws, { command: process.env.CMD, timeoutMs: 10000 });
    await backend.close();
    console.log(JSON.stringify({ limit: backend.processLimit(), stdout: r.stdout, stderr: r.stderr }));
  `;
  return new Promise((resolve, reject) => {
    execFile(
      "setpriv",
      [
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        process.execPath,
        "--import",
        "tsx",
        "--input-type=module",
        "-e",
        script,
      ],
      { cwd: root, env: { PATH: process.env.PATH ?? "", HOME: dir, CMD: command }, timeout: 30_000 },
      (err, stdout, stderr) => {
        const line = stdout.trim().split("\n").at(-1) ?? "";
        try {
          resolve(JSON.parse(line));
        } catch {
          reject(new Error(`no result from the child (${err?.message ?? "exit 0"}): ${stderr}`));
        }
      },
    );
  });
}

describe.skipIf(!nobodyReads)(
  "sandbox of a gateway run as an ordinary user (nobody, through setpriv)",
  () => {
    const dir = mkdtempSync(join(tmpdir(), "herald-nonroot-"));
    chmodSync(dir, 0o777);
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it("has no pids cgroup, runs as its own user, and RLIMIT_NPROC stops 150 background sleeps", async () => {
      const result = await runAsNobody(dir, "for i in $(seq 1 150); do sleep 2 & done; echo all-started");
      expect(result.limit).toEqual({});
      expect(result.stderr).toMatch(/Cannot fork/);
      expect(result.stdout).not.toContain("all-started");
    }, 40_000);
  },
);
