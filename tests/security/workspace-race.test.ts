/**
 * The workspace race: a process in the sandbox keeps swapping a folder of its workspace with a symbolic
 * link to a host folder (renameat2 RENAME_EXCHANGE in a loop) while the agent's file tools work on a
 * path through that folder. A tool that checks a path on the host and opens it again by path follows
 * the link on the host at some try: it reads the host's secret, or writes into the host folder. The file
 * tools do their I/O inside the sandbox, where the host folder does not exist, so no try reaches it.
 */
import { randomBytes } from "node:crypto";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandboxBackend, workspaceDirName } from "../../agent/exec/index.js";
import type { SpawnedProcess } from "../../agent/exec/types.js";
import type { FakeLlmToolCall } from "../fakes/llm/index.js";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";

/** The swapper: exchanges `d` (a folder) and `l` (a link to the host folder) as fast as it can. */
const SWAPPER = `
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
os.chdir("/workspace")
open("swapping", "w").close()
while True:
    libc.renameat2(-100, b"d", -100, b"l", 2)
`;

const ROUNDS = 12;
const CALLS_PER_ROUND = 25;

describe("file tools against a process swapping a workspace folder with a link to the host", () => {
  const secret = `host-secret-${randomBytes(8).toString("hex")}`;
  const hostDir = mkdtempSync(join(tmpdir(), "herald-host-"));
  let harness: Harness;
  let swapper: SpawnedProcess | undefined;
  const backend = new SandboxBackend();

  beforeAll(async () => {
    writeFileSync(join(hostDir, "secret.txt"), `SECRET=${secret}\n`);
    harness = await startHarness();
    const ws = {
      key: "api:dm:race",
      dir: join(harness.homeDir, "workspaces", workspaceDirName("api:dm:race")),
    };
    mkdirSync(join(ws.dir, "d"), { recursive: true });
    writeFileSync(join(ws.dir, "d", "secret.txt"), "SECRET=decoy\n");
    writeFileSync(join(ws.dir, "swap.py"), SWAPPER);
    await backend.prepare(ws);
    // Made by the sandbox's user, as a command would: the link points at the host folder by its path.
    const setup = backend.spawn(ws, { command: `ln -s ${hostDir} l` });
    await setup.exited;
    swapper = backend.spawn(ws, { command: "exec python3 swap.py" });
    swapper.stdout.resume();
    swapper.stderr.resume();
    const started = Date.now();
    while (!readdirSync(ws.dir).includes("swapping") && Date.now() - started < 10_000)
      await new Promise((resolve) => setTimeout(resolve, 20));
  }, 30_000);

  afterAll(async () => {
    swapper?.kill("SIGKILL");
    await swapper?.exited;
    await backend.close();
    await harness?.stop();
    rmSync(hostDir, { recursive: true, force: true });
  });

  it("never returns the host's secret and never writes into the host folder", async () => {
    let round = 0;
    const calls = (n: number): FakeLlmToolCall[] =>
      Array.from({ length: CALLS_PER_ROUND }, (_, k) => {
        switch ((n + k) % 4) {
          case 0:
            return { name: "read_file", arguments: { path: "d/secret.txt" } };
          case 1:
            return { name: "write_file", arguments: { path: `d/pwned-${n}-${k}.txt`, content: "pwned" } };
          case 2:
            return {
              name: "patch",
              arguments: { path: "d/secret.txt", old_string: "SECRET=", new_string: "SECRET=x" },
            };
          default:
            return { name: "search_files", arguments: { pattern: "SECRET", path: "d", content: true } };
        }
      });
    harness.llm.setDefault(() => {
      if (round >= ROUNDS) return { text: "done" };
      return { toolCalls: calls(round++) };
    });
    const reply = await chat(harness, "read the files", { sessionId: "race" });
    expect(reply.status).toBe(200);
    const results = harness.llm.requests
      .flatMap((r) => r.messages)
      .filter((m) => m.role === "tool")
      .map((m) => String(m.content ?? ""));
    expect(results.length).toBeGreaterThanOrEqual(ROUNDS * CALLS_PER_ROUND);
    expect(results.filter((r) => r.includes(secret))).toEqual([]);
    // The tools did work on the workspace's own folder whenever the swap left it in place.
    expect(results.some((r) => /SECRET=x*decoy/.test(r))).toBe(true);
    expect(readdirSync(hostDir)).toEqual(["secret.txt"]);
    expect(readFileSync(join(hostDir, "secret.txt"), "utf8")).toBe(`SECRET=${secret}\n`);
  }, 120_000);

  it("does not follow AGENTS.md when a command made it a link to the host's secret", async () => {
    const dir = join(harness.homeDir, "workspaces", workspaceDirName("api:dm:agents-link"));
    mkdirSync(dir, { recursive: true });
    symlinkSync(join(hostDir, "secret.txt"), join(dir, "AGENTS.md"));
    harness.llm.setDefault(() => ({ text: "hello" }));
    expect((await chat(harness, "hi", { sessionId: "agents-link" })).text).toBe("hello");
    const prompt = JSON.stringify(harness.llm.requests.at(-1)?.messages[0]);
    expect(prompt).not.toContain(secret);
    expect(prompt).not.toContain("Project context");
  });
});
