/**
 * The sandbox's resources: `/tmp` and `/dev/shm` were tmpfs of half the host's RAM (a command held
 * 2.5 GB there while its address space was limited to 1 GiB, and background processes kept it), and a
 * workspace could fill the disk. Now both are sized by `exec.limits.tmpSizeBytes`, the rest of `/dev`
 * is read-only, and a workspace past `exec.limits.workspaceQuotaBytes` takes no more writes: the agent
 * is told what is used and to delete files.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { runCommand } from "../../agent/exec/run.js";
import { SandboxBackend } from "../../agent/exec/sandbox.js";
import { workspaceDirName } from "../../agent/exec/workspaces.js";
import { tempWorkspace } from "../e2e/exec-contract.js";
import type { FakeLlmRequest } from "../fakes/llm/index.js";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";

const MiB = 1024 * 1024;

describe("the sandbox's /tmp and /dev/shm", () => {
  const ws = tempWorkspace("telegram:1@tmp-size");
  const backend = new SandboxBackend({ limits: { tmpSizeBytes: 8 * MiB } });
  afterAll(async () => {
    await backend.close();
    ws.cleanup();
  });

  it("are as large as exec.limits.tmpSizeBytes: writing past it fails with ENOSPC inside", async () => {
    const result = await runCommand(backend, ws, {
      command: [
        "dd if=/dev/zero of=/tmp/fill bs=1M count=32 2>&1 | head -1; echo tmp=$?",
        "dd if=/dev/zero of=/dev/shm/fill bs=1M count=32 2>&1 | head -1",
        "du -k /tmp/fill /dev/shm/fill",
      ].join("; "),
    });
    expect(result.stdout.match(/No space left on device/g)).toHaveLength(2);
    const sizes = [...result.stdout.matchAll(/^(\d+)\t/gm)].map((m) => Number(m[1]) * 1024);
    expect(sizes).toHaveLength(2);
    for (const size of sizes) expect(size).toBeLessThanOrEqual(8 * MiB);
  });

  it("leave the rest of /dev read-only (its devices still work)", async () => {
    const result = await runCommand(backend, ws, {
      command:
        "dd if=/dev/zero of=/dev/fill bs=1M count=32 2>&1 | head -1; echo ok > /dev/null && echo null-ok",
    });
    expect(result.stdout).toMatch(/Read-only file system/);
    expect(result.stdout).toContain("null-ok");
  });
});

describe("a workspace past its quota, through the gateway", () => {
  let harness: Harness | undefined;
  afterEach(async () => {
    await harness?.stop();
    harness = undefined;
  });

  it("refuses writes and says how much is used and to delete files; after deleting, writes work again", async () => {
    harness = await startHarness({ env: { HERALD_EXEC_WORKSPACE_QUOTA_BYTES: String(4 * MiB) } });
    harness.llm.script(
      { toolCalls: [{ name: "terminal", arguments: { command: "head -c 6291456 /dev/zero > big.bin" } }] },
      { toolCalls: [{ name: "write_file", arguments: { path: "notes.txt", content: "more" } }] },
      {
        toolCalls: [
          { name: "terminal", arguments: { command: "head -c 4096 /dev/zero > more.bin; echo rc=$?" } },
        ],
      },
      { toolCalls: [{ name: "terminal", arguments: { command: "rm big.bin more.bin" } }] },
      { toolCalls: [{ name: "write_file", arguments: { path: "notes.txt", content: "fits now" } }] },
      { text: "done" },
    );
    const reply = await chat(harness, "fill the disk", { sessionId: "quota" });
    expect(reply.text).toBe("done");
    const results = (harness.llm.requests.at(-1) as FakeLlmRequest).messages
      .filter((m) => m.role === "tool")
      .map((m) => String(m.content ?? ""));
    expect(results[1]).toMatch(
      /^error: write_file failed: notes\.txt was not written: the workspace holds 6\.\d MiB of its 4\.0 MiB quota/,
    );
    expect(results[1]).toMatch(/delete files/);
    expect(results[2]).toMatch(/over its 4\.0 MiB quota: this command ran unable to grow any file/);
    expect(results[2]).not.toContain("rc=0");
    expect(results[4]).toBe("Created notes.txt (8 bytes written)");
    const dir = join(harness.homeDir, "workspaces", workspaceDirName("api:dm:quota"));
    expect(existsSync(join(dir, "big.bin"))).toBe(false);
    expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("fits now");
  }, 60_000);
});
