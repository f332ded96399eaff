/**
 * Logs as an operator meets them: `herald gateway` prints pretty, coloured lines in a terminal (a real
 * pseudo-terminal through util-linux's `script`) and JSON lines when piped, always also to
 * `HERALD_HOME/logs/herald.log` (rotated, no secrets); `herald logs -n` reads them back.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createRotatingFile } from "../../core/log-file.js";
import { printLogs } from "../../core/log-reader.js";
import { createProcessLogger } from "../../core/process-logger.js";
import { type FakeLlm, startFakeLlm } from "../fakes/llm/index.js";

const root = join(import.meta.dirname, "..", "..");
const cli = join(root, "app", "cli.ts");
const herald = `${process.execPath} --import tsx ${cli}`;
const ESC = "\u001b[";

let llm: FakeLlm | undefined;
let home: string | undefined;
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.pid) process.kill(-child.pid, "SIGKILL");
  }
  await llm?.close();
  llm = undefined;
  if (home) rmSync(home, { recursive: true, force: true });
  home = undefined;
});

/** Runs a shell command line in its own process group; resolves with its output once `until` matches. */
function run(command: string, env: Record<string, string>, until: RegExp): Promise<string> {
  const child = spawn("bash", ["-c", command], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  children.push(child);
  let out = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${until} in:\n${out}`)), 30_000);
    const check = (d: Buffer) => {
      out += d.toString();
      if (until.test(out)) {
        clearTimeout(timer);
        resolve(out);
      }
    };
    child.stdout!.on("data", check);
    child.stderr!.on("data", check);
    child.once("exit", () => {
      clearTimeout(timer);
      if (until.test(out)) resolve(out);
      else reject(new Error(`exited without ${until}:\n${out}`));
    });
  });
}

/** The command line run inside a pseudo-terminal (stdout is a TTY there). */
const inPty = (command: string) => `script -qfec ${JSON.stringify(command)} /dev/null`;

async function gatewayEnv(): Promise<Record<string, string>> {
  llm = await startFakeLlm();
  home = mkdtempSync(join(tmpdir(), "herald-logs-"));
  return {
    HERALD_HOME: home,
    OPENAI_BASE_URL: llm.url,
    OPENAI_API_KEY: "sk-very-secret-model-key",
    HERALD_MODEL: "fake-model",
    API_SERVER_PORT: "0",
    HERALD_LOG_FORMAT: "",
  };
}

describe("gateway logs", () => {
  it("are pretty and coloured in a terminal, and JSON lines in the file", async () => {
    const env = await gatewayEnv();
    const out = await run(inPty(`${herald} gateway`), env, /herald ready/);
    expect(out).toContain(`${ESC}32mINFO${ESC}39m`);
    expect(out).toMatch(/\[\d\d:\d\d:\d\d\.\d{3}\] .*INFO.*herald ready/);
    expect(out).not.toMatch(/^\{"level"/m);
    const file = readFileSync(join(home!, "logs", "herald.log"), "utf8")
      .trim()
      .split("\n");
    const ready = file.map((l) => JSON.parse(l) as { msg: string }).find((l) => l.msg === "herald ready");
    expect(ready).toBeDefined();
    expect(readFileSync(join(home!, "logs", "herald.log"), "utf8")).not.toContain("sk-very-secret");
  });

  it("are JSON lines when piped, and `herald logs -n` reads the last ones back", async () => {
    const env = await gatewayEnv();
    const out = await run(`${herald} gateway | cat`, env, /herald ready/);
    const lines = out.trim().split("\n");
    expect(lines.every((l) => l.startsWith("{"))).toBe(true);
    expect(lines.map((l) => (JSON.parse(l) as { msg: string }).msg)).toContain("herald ready");
    expect(out).not.toContain(ESC);

    const last = await run(`${herald} logs -n 1 | cat`, env, /herald ready[\s\S]*$/);
    expect(last.trim().split("\n")).toHaveLength(1);
    expect(JSON.parse(last) as { msg: string }).toMatchObject({ msg: "herald ready" });

    const pretty = await run(inPty(`${herald} logs -n 2`), env, /herald ready/);
    expect(pretty).toMatch(/INFO.*herald ready/);
    expect(pretty).toContain(ESC);
  });

  it("`herald logs` says where the log will be when there is none yet", async () => {
    home = mkdtempSync(join(tmpdir(), "herald-logs-"));
    const out = await run(`${herald} logs; echo "exit=$?"`, { HERALD_HOME: home }, /exit=\d/);
    expect(out).toMatch(/No log at .*herald\.log yet.*herald gateway/);
    expect(out).toContain("exit=1");
  });
});

describe("the rotating log file", () => {
  it("rotates by size and keeps the newest N files, every line whole and in order", () => {
    home = mkdtempSync(join(tmpdir(), "herald-logs-"));
    const path = join(home, "logs", "herald.log");
    const file = createRotatingFile({ path, maxBytes: 1000, keep: 3 });
    for (let i = 0; i < 100; i++) file.write(`${JSON.stringify({ n: i, pad: "x".repeat(80) })}\n`);
    file.close();
    expect(readdirSync(join(home, "logs")).sort()).toEqual([
      "herald.log",
      "herald.log.1",
      "herald.log.2",
      "herald.log.3",
    ]);
    const numbers = (name: string) =>
      readFileSync(join(home!, "logs", name), "utf8")
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as { n: number }).n);
    const kept = [
      ...numbers("herald.log.3"),
      ...numbers("herald.log.2"),
      ...numbers("herald.log.1"),
      ...numbers("herald.log"),
    ];
    // The newest lines, consecutive, ending with the last one written; each file under the limit.
    expect(kept.at(-1)).toBe(99);
    expect(kept).toEqual(kept.map((_, i) => kept[0]! + i));
    expect(kept.length).toBeLessThan(100);
    for (const name of ["herald.log", "herald.log.1", "herald.log.2", "herald.log.3"])
      expect(readFileSync(join(home, "logs", name)).length).toBeLessThanOrEqual(1000);
    expect(existsSync(`${path}.4`)).toBe(false);
  });
});

describe("herald logs -f", () => {
  it("follows new lines, across a rotation, until stopped", async () => {
    home = mkdtempSync(join(tmpdir(), "herald-logs-"));
    const path = join(home, "logs", "herald.log");
    const file = createRotatingFile({ path, maxBytes: 200, keep: 2 });
    const line = (n: number) => `${JSON.stringify({ n, pad: "y".repeat(40) })}\n`;
    file.write(line(0));
    let out = "";
    const sink = {
      write: (s: string) => {
        out += s;
        return true;
      },
    } as unknown as NodeJS.WritableStream;
    const controller = new AbortController();
    const following = printLogs(path, {
      lines: 1,
      follow: true,
      signal: controller.signal,
      pollMs: 20,
      out: sink,
    });
    const seen = () =>
      out
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { n: number }).n);
    // Three lines fill a file: the fourth and seventh rotate it while we follow, one line at a time…
    for (let n = 1; n <= 8; n++) {
      file.write(line(n));
      await vi.waitFor(() => expect(seen().at(-1)).toBe(n), { timeout: 5000 });
    }
    // …and two rotations at once between two looks: nothing is lost.
    for (let n = 9; n <= 14; n++) file.write(line(n));
    await vi.waitFor(() => expect(seen().at(-1)).toBe(14), { timeout: 5000 });
    controller.abort();
    await following;
    file.close();
    expect(seen()).toEqual(Array.from({ length: 15 }, (_, i) => i));
    expect(existsSync(`${path}.1`)).toBe(true);
  });
});

describe("a log folder that cannot be written", () => {
  it("keeps logging to stdout and says once what to fix", () => {
    home = mkdtempSync(join(tmpdir(), "herald-logs-"));
    writeFileSync(join(home, "logs"), "a file where the folder should be");
    let stdout = "";
    const errors: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((text: string) => errors.push(text) > 0) as typeof process.stderr.write;
    try {
      const { logger } = createProcessLogger({
        level: "info",
        format: "json",
        logsDir: join(home, "logs"),
        stdout: { write: (text: string) => (stdout += text) },
      });
      logger.info({ n: 1 }, "still logging");
    } finally {
      process.stderr.write = write;
    }
    expect(JSON.parse(stdout)).toMatchObject({ msg: "still logging" });
    expect(errors.join("")).toMatch(/cannot open .*herald\.log .*logging to stdout only.*HERALD_LOG_FILES=0/);
  });
});
