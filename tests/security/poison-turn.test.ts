/**
 * Poison turns: a message whose processing would end the gateway process, so that the turn journal
 * re-runs it at every start and the gateway crash-loops. A real `herald gateway` process (with a heap
 * limit, as a small VPS runs it), a fake Telegram and the scripted model:
 * - `read_file` with `limit: 1` on a workspace file of one huge line returns the line's start, cut, and
 *   the process stays up (the line reader no longer builds the whole line);
 * - a turn that kills the process runs once more after the restart; when it kills it again, the next
 *   start fails it with a message to its chat, once, logs it with the turn id, and stays up;
 * - on Redis, a turn that kills its worker runs once more on another worker, then is failed the same way.
 */
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { workspaceDirName } from "../../exec/index.js";
import { type FakeLlm, type FakeLlmRequest, messageText, startFakeLlm } from "../fakes/llm/index.js";
import { type FakeTelegram, startFakeTelegram } from "../fakes/telegram/index.js";
import { clusterPerTest } from "../helpers/cluster-per-test.js";
import { eventually, type HeraldProcess, spawnHerald, until } from "../helpers/herald-cluster.js";
import { freePort } from "../helpers/net.js";
import { redisPerFile } from "../helpers/redis.js";

const redis = redisPerFile();
const cluster = clusterPerTest(redis);
let llm: FakeLlm | undefined;
let telegram: FakeTelegram | undefined;
let gateway: HeraldProcess | undefined;
let home: string | undefined;

afterEach(async () => {
  await gateway?.kill();
  await llm?.close();
  await telegram?.close();
  if (home) rmSync(home, { recursive: true, force: true });
  gateway = llm = telegram = home = undefined;
});

/** The gateway's env: its home, the fake model, a fake Telegram with user 111 allowed. */
async function gatewayEnv(extra: Record<string, string> = {}): Promise<Record<string, string>> {
  llm = await startFakeLlm();
  telegram = await startFakeTelegram();
  home = mkdtempSync(join(tmpdir(), "herald-poison-"));
  return {
    HERALD_HOME: home,
    OPENAI_BASE_URL: llm.url,
    OPENAI_API_KEY: "k",
    HERALD_MODEL: "fake-model",
    API_SERVER_PORT: String(await freePort()),
    HERALD_LOG_LEVEL: "info",
    HERALD_LEARNING_ENABLED: "false",
    TELEGRAM_BOT_TOKEN: telegram.token,
    TELEGRAM_API_ROOT: telegram.url,
    TELEGRAM_ALLOWED_USERS: "111",
    ...extra,
  };
}

/** Starts `herald gateway`; resolves once /health answers. */
async function startGateway(env: Record<string, string>): Promise<HeraldProcess> {
  const proc = spawnHerald("gateway", "gateway", env);
  const health = `http://127.0.0.1:${env["API_SERVER_PORT"]}/health`;
  await until("gateway /health", proc, async () => (await fetch(health)).ok);
  return proc;
}

const alive = (proc: HeraldProcess) => proc.child.exitCode === null && proc.child.signalCode === null;

/** Resolves with the exit code once `proc` has exited. */
function exited(proc: HeraldProcess): Promise<number | null> {
  if (!alive(proc)) return Promise.resolve(proc.child.exitCode);
  return new Promise((resolve) => proc.child.once("exit", (code) => resolve(code)));
}

/** Writes `bytes` of "a" as one line, then a short second line, 1 MiB at a time. */
function writeOneHugeLine(path: string, bytes: number): void {
  const fd = openSync(path, "w");
  const block = Buffer.alloc(1024 * 1024, "a");
  try {
    for (let left = bytes; left > 0; left -= block.length)
      writeSync(fd, block, 0, Math.min(left, block.length));
    writeSync(fd, "\nsecond line\n");
  } finally {
    closeSync(fd);
  }
}

/**
 * A plugin whose tool `crash_process` throws where nothing can catch it (as a stream callback's
 * RangeError did): the process that runs it ends. Written under `pluginsDir`.
 */
function writeCrasher(pluginsDir: string): void {
  const plugin = join(pluginsDir, "crasher");
  mkdirSync(plugin, { recursive: true });
  writeFileSync(join(plugin, "plugin.json"), JSON.stringify({ name: "crasher", version: "1.0.0" }));
  writeFileSync(
    join(plugin, "index.js"),
    `import { definePlugin, z } from "herald/plugin";
export default definePlugin({ tools: [{ name: "crash_process", description: "ends the process",
  parameters: z.object({}),
  execute: () => new Promise(() => { setImmediate(() => { throw new Error("crash_process ran"); }); }) }] });`,
  );
}

/** The model's answer to every request: call `crash_process`. */
const crashEveryRun = () => ({ toolCalls: [{ name: "crash_process", arguments: {} }] });

const CRASHED = "made Herald stop twice";
const texts = (fake: FakeTelegram) => fake.botMessages(111).map((m) => m.text ?? "");

describe("a file of one huge line", () => {
  it("read_file limit 1 returns the line's start, cut, and the gateway stays up", async () => {
    // 128 MB of heap, a 300 MB line: the old line reader held the whole line and died at the limit.
    const env = await gatewayEnv({ NODE_OPTIONS: "--max-old-space-size=128" });
    const lineBytes = 300 * 1024 * 1024;
    const workspace = join(home!, "workspaces", workspaceDirName("telegram:dm:111"));
    mkdirSync(workspace, { recursive: true });
    writeOneHugeLine(join(workspace, "huge.log"), lineBytes);
    gateway = await startGateway(env);

    llm!.script(
      { toolCalls: [{ name: "read_file", arguments: { path: "huge.log", limit: 1 } }] },
      { text: "read it" },
    );
    telegram!.userSends({ chatId: 111, fromId: 111, text: "show me the first line of huge.log" });
    await eventually(
      () => texts(telegram!).includes("read it") || !alive(gateway!),
      () => `no answer:\n${gateway!.output()}`,
      60_000,
    );
    expect(gateway.child.exitCode, gateway.output()).toBeNull();
    const tool = llm!.requests[1]!.messages.find((m) => m.role === "tool");
    const result = String(tool?.content ?? "");
    expect(result).toContain(
      `     1\t${"a".repeat(2000)} … [line cut: ${(lineBytes - 2000).toLocaleString("en-US")} more characters]`,
    );
    expect(result).toMatch(/\(lines 1–1 of 2; next page: offset=2\)$/);

    // Still serving, with memory to spare.
    llm!.script({ text: "still here" });
    telegram!.userSends({ chatId: 111, fromId: 111, text: "are you there?" });
    await telegram!.waitFor(() => texts(telegram!).includes("still here"), 30_000);
    expect(gateway.child.exitCode).toBeNull();
  }, 120_000);
});

describe("a turn that ends the process", () => {
  it("runs once more after a restart, then is failed with a message to its chat and the gateway stays up", async () => {
    const env = await gatewayEnv();
    writeCrasher(join(home!, "plugins"));
    llm!.setDefault(crashEveryRun);

    gateway = await startGateway(env);
    telegram!.userSends({ chatId: 111, fromId: 111, text: "do the thing that crashes" });
    expect(await exited(gateway)).toBe(1);
    expect(llm!.received()).toBe(1);

    // The first restart runs the turn once more (at once, before the API is up); it ends the process again.
    gateway = spawnHerald("gateway", "gateway", env);
    expect(await exited(gateway)).toBe(1);
    expect(llm!.received()).toBe(2);

    // The second restart fails it: the chat is told, once, and the model is not asked again.
    gateway = await startGateway(env);
    await telegram!.waitFor(() => texts(telegram!).some((t) => t.includes(CRASHED)), 30_000);
    const log = readFileSync(join(home!, "logs", "herald.log"), "utf8");
    const turnId = /"turnId":"(t[0-9a-f]+)"[^\n]*failed, not run again/.exec(log)?.[1];
    expect(turnId, log.slice(-4000)).toBeDefined();
    const told = texts(telegram!).filter((t) => t.includes(CRASHED));
    expect(told).toHaveLength(1);
    expect(told[0]).toContain(`turn ${turnId}`);
    expect(log).toMatch(new RegExp(`"turnId":"${turnId}"[^\\n]*running it once more`));
    expect(llm!.received()).toBe(2);

    // It stays up and answers the next message.
    llm!.setDefault(() => ({ text: "back to normal" }));
    telegram!.userSends({ chatId: 111, fromId: 111, text: "hello again" });
    await telegram!.waitFor(() => texts(telegram!).includes("back to normal"), 30_000);
    expect(gateway.child.exitCode).toBeNull();
    expect(texts(telegram!).filter((t) => t.includes(CRASHED))).toHaveLength(1);
  }, 120_000);
});

describe("a delegated task that ends the process", () => {
  it("goes with its parent: the parent is failed at the third start and the child is not run again", async () => {
    const env = await gatewayEnv();
    writeCrasher(join(home!, "plugins"));
    const isChild = (r: FakeLlmRequest) => messageText(r.messages[0]).includes("sub-agent");
    llm!.setDefault((request) =>
      isChild(request)
        ? crashEveryRun()
        : { toolCalls: [{ name: "delegate_task", arguments: { tasks: [{ goal: "crash the process" }] } }] },
    );
    gateway = await startGateway(env);
    telegram!.userSends({ chatId: 111, fromId: 111, text: "hand the crash to a sub-agent" });
    expect(await exited(gateway)).toBe(1);
    gateway = spawnHerald("gateway", "gateway", env);
    expect(await exited(gateway)).toBe(1);
    const children = llm!.requests.filter(isChild).length;

    gateway = await startGateway(env);
    await telegram!.waitFor(() => texts(telegram!).some((t) => t.includes(CRASHED)), 30_000);
    // Given time to run, the child would have ended the process again.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(alive(gateway), gateway.output()).toBe(true);
    expect(llm!.requests.filter(isChild)).toHaveLength(children);
    expect(texts(telegram!).filter((t) => t.includes(CRASHED))).toHaveLength(1);
  }, 120_000);
});

describe("on Redis", () => {
  it("a turn that kills its worker runs once more on another, then is failed with a message to its chat", async () => {
    // Short locks: a dead worker's turn comes back within seconds.
    const { c, tg, model } = await cluster.start({ lockDurationMs: 2_000 });
    const pluginsDir = join(c.home, "worker-plugins");
    writeCrasher(pluginsDir);
    const env = { env: { HERALD_PLUGINS_DIR: pluginsDir } };
    model.setDefault(crashEveryRun);
    const first = [await c.startWorker("fake-model", 1, env), await c.startWorker("fake-model", 1, env)];
    tg.userSends({ chatId: 111, fromId: 111, text: "do the thing that crashes" });
    // One worker dies running it; BullMQ gives the job to the other once its lock expires; it dies too.
    await Promise.all(first.map((w) => exited(w)));
    for (const w of first) await c.kill(w);
    expect(model.received()).toBe(2);

    // The next worker finds the job dead twice: it fails it without running it.
    await c.startWorker("fake-model", 1, env);
    await eventually(
      () => texts(tg).some((t) => t.includes(CRASHED)),
      () => `${texts(tg).join(" | ")}:\n${c.output()}`,
    );
    expect(texts(tg).filter((t) => t.includes(CRASHED))).toHaveLength(1);
    expect(model.received()).toBe(2);
    model.setDefault(() => ({ text: "back to normal" }));
    tg.userSends({ chatId: 111, fromId: 111, text: "hello again" });
    await eventually(
      () => texts(tg).includes("back to normal"),
      () => c.output(),
    );
    expect(c.answers("telegram:dm:111")).toEqual(["back to normal"]);
  }, 90_000);
});
