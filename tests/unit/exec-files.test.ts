/**
 * The pieces of the workspace-files API that run without a sandbox: the gateway's first path check, the
 * file helper's protocol (the real helper program, run by plain node on a temp folder), and the quota
 * on the local backend.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FILES_HELPER_SOURCE } from "../../agent/exec/files-helper-script.js";
import {
  HelperWorkspaceFiles,
  LocalBackend,
  LocalWorkspaceFiles,
  QuotaExceededError,
  WorkspaceQuota,
  workspacePath,
} from "../../agent/exec/index.js";

const base = mkdtempSync(join(tmpdir(), "herald-exec-files-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe("workspacePath", () => {
  it("takes relative paths and absolute ones under the virtual or host root", () => {
    expect(workspacePath("a/b.txt")).toBe("a/b.txt");
    expect(workspacePath("./a//b/../c")).toBe("a/c");
    expect(workspacePath(".")).toBe(".");
    expect(workspacePath("/workspace/x", { virtualRoot: "/workspace" })).toBe("x");
    expect(workspacePath("/workspace", { virtualRoot: "/workspace" })).toBe(".");
    expect(workspacePath("/srv/ws/x", { hostRoot: "/srv/ws" })).toBe("x");
  });

  it.each(["../x", "a/../../x", "/etc/passwd", "/workspace2/x", "x\0y"])(
    "refuses %s with the reason",
    (path) => {
      expect(() => workspacePath(path, { virtualRoot: "/workspace" })).toThrow(
        /outside the workspace|NUL byte/,
      );
    },
  );
});

/** A helper over `root` run by plain node (what the sandbox runs, without the sandbox). */
function helperOver(root: string, options: { idleMs?: number; requestTimeoutMs?: number } = {}) {
  let starts = 0;
  const files = new HelperWorkspaceFiles({
    start: () => {
      starts++;
      return spawn(process.execPath, ["-e", FILES_HELPER_SOURCE, root], { stdio: ["pipe", "pipe", "pipe"] });
    },
    ...options,
  });
  return { files, starts: () => starts };
}

describe("HelperWorkspaceFiles with the real helper program", () => {
  const root = join(base, "helper");
  mkdirSync(root);

  it("reads in pieces larger than a frame and streams writes in chunks", async () => {
    const { files } = helperOver(root);
    const big = Buffer.alloc(2_500_000);
    for (let i = 0; i < big.length; i++) big[i] = i % 251;
    expect(await files.write("big.bin", big)).toMatchObject({ created: true, writtenBytes: big.length });
    expect(
      Buffer.compare(Buffer.from(await files.read("big.bin", { offset: 0, length: 3_000_000 })), big),
    ).toBe(0);
    const chunks = (async function* () {
      yield Buffer.from("one ");
      yield Buffer.from("two");
    })();
    expect(await files.write("big.bin", chunks)).toEqual({
      created: false,
      previousBytes: big.length,
      writtenBytes: 7,
    });
    expect(readFileSync(join(root, "big.bin"), "utf8")).toBe("one two");
    await files.close();
  });

  it("drops the temporary file when the data source fails mid-write, and keeps the old content", async () => {
    const { files } = helperOver(root);
    writeFileSync(join(root, "keep.txt"), "old");
    const failing = (async function* () {
      yield Buffer.alloc(2_000_000, 1);
      throw new Error("source broke");
    })();
    await expect(files.write("keep.txt", failing)).rejects.toThrow("source broke");
    expect(readFileSync(join(root, "keep.txt"), "utf8")).toBe("old");
    expect(readdirSync(root).filter((n) => n.endsWith(".tmp"))).toEqual([]);
    // The helper is still in step: the next request works.
    expect(await files.stat("keep.txt")).toMatchObject({ kind: "file", sizeBytes: 3 });
    await files.close();
  });

  it("refuses FIFOs instead of blocking on them", async () => {
    const { files } = helperOver(root);
    await new Promise((resolve) => spawn("mkfifo", [join(root, "pipe")]).once("exit", resolve));
    await expect(files.read("pipe", { offset: 0, length: 10 })).rejects.toThrow(/not a regular file/);
    await files.close();
  });

  it("ends after its idle time and starts again on the next request", async () => {
    const { files, starts } = helperOver(root, { idleMs: 50 });
    await files.stat("keep.txt");
    expect(files.active).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(files.active).toBe(false);
    expect(await files.stat("keep.txt")).toMatchObject({ kind: "file" });
    expect(starts()).toBe(2);
    await files.close();
  });

  it("fails the request in flight with the reason when the helper dies, and recovers", async () => {
    let kills = 0;
    const files = new HelperWorkspaceFiles({
      start: () =>
        kills++ === 0
          ? spawn("/bin/sh", ["-c", "echo helper crashed >&2; exit 3"], { stdio: ["pipe", "pipe", "pipe"] })
          : spawn(process.execPath, ["-e", FILES_HELPER_SOURCE, root], { stdio: ["pipe", "pipe", "pipe"] }),
    });
    await expect(files.stat("keep.txt")).rejects.toMatchObject({
      code: "tool_error",
      message: expect.stringMatching(/file helper stopped \(helper crashed\)/),
    });
    expect(await files.stat("keep.txt")).toMatchObject({ kind: "file" });
    await files.close();
  });

  it("reports the helper's reason, not the broken pipe, when it closed its input before exiting", async () => {
    // Answers one request, closes its input, and takes a moment to exit: the next write breaks the pipe
    // before the exit is seen.
    const answerOnceThenHang =
      'read line; echo \'{"id":1,"ok":true,"missing":true}\'; exec 0<&-; echo helper crashed >&2; sleep 0.3; exit 3';
    const files = new HelperWorkspaceFiles({
      start: () => spawn("/bin/sh", ["-c", answerOnceThenHang], { stdio: ["pipe", "pipe", "pipe"] }),
    });
    await files.stat("first.txt");
    await new Promise((resolve) => setTimeout(resolve, 100));
    await expect(files.stat("keep.txt")).rejects.toMatchObject({
      code: "tool_error",
      message: expect.stringMatching(/file helper stopped \(helper crashed\)/),
    });
    await files.close();
  });

  it("kills a helper that does not answer within the request timeout", async () => {
    const files = new HelperWorkspaceFiles({
      start: () => spawn("/bin/sh", ["-c", "exec sleep 30"], { stdio: ["pipe", "pipe", "pipe"] }),
      requestTimeoutMs: 200,
    });
    await expect(files.stat("x")).rejects.toThrow(/no answer within 0.2 s/);
    await files.close();
  });
});

describe("WorkspaceQuota on the local backend", () => {
  const dir = join(base, "quota");
  mkdirSync(dir);
  const workspace = { key: "q", dir };
  const backend = new LocalBackend();

  it("refuses a write past the quota with what is used, counts its own writes, and measures again after a command", async () => {
    const quota = new WorkspaceQuota({ backend, quotaBytes: 1024 * 1024 });
    const files = quota.wrap(workspace, new LocalWorkspaceFiles(workspace));
    await files.write("a.bin", Buffer.alloc(600 * 1024));
    const refused = files.write("b.bin", Buffer.alloc(600 * 1024));
    await expect(refused).rejects.toBeInstanceOf(QuotaExceededError);
    await expect(refused).rejects.toThrow(/holds 6\d\d\.?\d* KiB of its 1\.0 MiB quota.*delete files/);
    // Replacing a file counts only the difference.
    await files.write("a.bin", Buffer.alloc(700 * 1024));
    // A command wrote behind the quota's back: the next write measures again.
    writeFileSync(join(dir, "c.bin"), Buffer.alloc(400 * 1024));
    quota.invalidate(dir);
    await expect(files.write("d.txt", Buffer.from("x"))).rejects.toBeInstanceOf(QuotaExceededError);
    expect((await quota.commandPrefix(workspace)).prefix).toBe("ulimit -f 0; ");
    rmSync(join(dir, "c.bin"));
    quota.invalidate(dir);
    await files.write("d.txt", Buffer.from("x"));
  });

  it("stops a streamed write at the quota", async () => {
    const quota = new WorkspaceQuota({ backend, quotaBytes: 2 * 1024 * 1024 });
    const files = quota.wrap(workspace, new LocalWorkspaceFiles(workspace));
    const endless = (async function* () {
      for (;;) yield Buffer.alloc(256 * 1024);
    })();
    await expect(files.write("stream.bin", endless)).rejects.toBeInstanceOf(QuotaExceededError);
    expect(readdirSync(dir).filter((n) => n.startsWith("stream.bin") || n.endsWith(".tmp"))).toEqual([]);
  });
});
