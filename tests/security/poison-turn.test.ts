/**
 * Poison turns: a message whose processing would end the gateway process, so that the turn journal
 * re-runs it at every start and the gateway crash-loops. A real `herald gateway` process (with a heap
 * limit, as a small VPS runs it), a fake Telegram and the scripted model:
 * - `read_file` with `limit: 1` on a workspace file of one huge line returns the line's start, cut, and
 *   the process stays up (the line reader no longer builds the whole line); `search_files`, `patch`,
 *   and PDF and DOCX files that unpack to gigabytes (read, or sent as an attachment) answer within the
 *   same heap, and the process's peak memory stays near it; MCP answers of 200 MB fail clearly;
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
import { workspaceDirName } from "../../agent/exec/index.js";
import { type FakeLlm, type FakeLlmRequest, messageText, startFakeLlm } from "../fakes/llm/index.js";
import { OVERSIZED_STDIO, type OversizedMcp, startOversizedMcp } from "../fakes/mcp/index.js";
import { type FakeTelegram, startFakeTelegram } from "../fakes/telegram/index.js";
import { clusterPerTest } from "../helpers/cluster-per-test.js";
import { makeDocxBomb, makePdfBomb } from "../helpers/document-fixtures.js";
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

/** The highest resident memory `proc` had (Linux: VmHWM). */
function peakResidentBytes(proc: HeraldProcess): number {
  const status = readFileSync(`/proc/${proc.child.pid}/status`, "utf8");
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1]) * 1024;
}

const alive = (proc: HeraldProcess) => proc.child.exitCode === null && proc.child.signalCode === null;

/** Resolves with the exit code once `proc` has exited. */
function exited(proc: HeraldProcess): Promise<number | null> {
  if (!alive(proc)) return Promise.resolve(proc.child.exitCode);
  return new Promise((resolve) => proc.child.once("exit", (code) => resolve(code)));
}

/** Writes `unit` repeated to `bytes` (a multiple of its length), then `tail`, 1 MiB at a time. */
function writeRepeated(path: string, unit: string, bytes: number, tail = ""): void {
  const fd = openSync(path, "w");
  const block = Buffer.from(unit.repeat((1024 * 1024) / unit.length));
  try {
    for (let left = bytes; left > 0; left -= block.length)
      writeSync(fd, block, 0, Math.min(left, block.length));
    writeSync(fd, tail);
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

describe("tools on large files, in a gateway with a 128 MB heap", () => {
  it("read_file, search_files, patch and attachments answer in bounded memory, and the gateway stays up", async () => {
    // A small VPS's heap. The old line reader held a whole line (a 300 MB one died at the limit);
    // ripgrep's JSON gave a matching line whole, with an entry per match; patch's hint and diff made
    // arrays of every token and line of a file under its 20 MB limit.
    const env = await gatewayEnv({ NODE_OPTIONS: "--max-old-space-size=128" });
    const workspace = join(home!, "workspaces", workspaceDirName("telegram:dm:111"));
    mkdirSync(workspace, { recursive: true });
    const hugeBytes = 300 * 1024 * 1024;
    writeRepeated(join(workspace, "huge.log"), "a", hugeBytes, "\nsecond line\n");
    writeRepeated(join(workspace, "wide.log"), "b", 40 * 1024 * 1024, "\n");
    writeRepeated(join(workspace, "spaced.txt"), "c ", 9 * 1024 * 1024);
    writeRepeated(join(workspace, "lines.txt"), "d\n", 9 * 1024 * 1024);
    // 1.5 MB and 1 MB that unpack to 1.5 GB and 300 MB: PDF.js held the first outside the heap (3 GB
    // resident), mammoth the second in it.
    writeFileSync(join(workspace, "bomb.pdf"), await makePdfBomb(1500));
    writeFileSync(join(workspace, "bomb.docx"), await makeDocxBomb(300));
    // Over what Herald sends: the adapters that upload read a file whole, at every delivery attempt.
    writeRepeated(join(workspace, "video.bin"), "v", 60 * 1024 * 1024);
    gateway = await startGateway(env);

    const call = (name: string, args: Record<string, unknown>) => ({
      toolCalls: [{ name, arguments: args }],
    });
    llm!.script(
      call("read_file", { path: "huge.log", limit: 1 }),
      call("search_files", { pattern: "b", content: true }),
      call("patch", { path: "spaced.txt", old_string: "no such text", new_string: "x" }),
      call("patch", { path: "lines.txt", old_string: "d", new_string: "dd", replace_all: true }),
      call("read_file", { path: "bomb.pdf", limit: 1 }),
      call("read_file", { path: "bomb.docx", limit: 1 }),
      call("send_message", { target: "origin", file: "video.bin" }),
      { text: "read it" },
    );
    telegram!.userSends({ chatId: 111, fromId: 111, text: "look at the big files" });
    await eventually(
      () => texts(telegram!).includes("read it") || !alive(gateway!),
      () => `no answer:\n${gateway!.output()}`,
      90_000,
    );
    expect(alive(gateway), gateway.output()).toBe(true);
    const [read, search, notFound, tooMany, pdf, docx, sent] = llm!.requests[7]!.messages.filter(
      (m) => m.role === "tool",
    ).map((m) => String(m.content ?? ""));
    expect(read).toContain(
      `     1\t${"a".repeat(2000)} … [line cut: ${(hugeBytes - 2000).toLocaleString("en-US")} more characters]`,
    );
    expect(read).toMatch(/\(lines 1–1 of 2; next page: offset=2\)$/);
    expect(search).toBe(`wide.log:1: ${"b".repeat(300)} … [line cut]\n(1 matching line in 1 file)`);
    expect(notFound).toMatch(/old_string was not found in spaced\.txt/);
    expect(tooMany).toMatch(/occurs more than 10,000 times in lines\.txt; patch replaces at most 10,000/);
    expect(pdf).toMatch(/^error: .*bomb\.pdf could not be read as PDF: it needed more than 512 MB/);
    expect(docx).toMatch(/^error: .*bomb\.docx could not be read as DOCX: it needed more than 512 MB/);
    expect(sent).toMatch(/^error: .*video\.bin is 60\.0 MB; files sent to a chat are at most 50 MB/);

    // The same DOCX as a chat attachment: its text cannot be read, the message is still answered.
    const file = telegram!.addFile(await makeDocxBomb(300), "documents/bomb.docx");
    llm!.script({ text: "got your file" });
    telegram!.userSends({
      chatId: 111,
      fromId: 111,
      extra: { document: { ...file, file_name: "report.docx" }, caption: "summarise this" },
    });
    await telegram!.waitFor(() => texts(telegram!).includes("got your file"), 60_000);
    expect(JSON.stringify(llm!.requests.at(-1)!.messages.at(-1))).toContain("report.docx");
    // What the process held at its peak, converters' work included: about the heap's size, not gigabytes.
    expect(peakResidentBytes(gateway)).toBeLessThan(512 * 1024 * 1024);

    // Still serving.
    llm!.script({ text: "still here" });
    telegram!.userSends({ chatId: 111, fromId: 111, text: "are you there?" });
    await telegram!.waitFor(() => texts(telegram!).includes("still here"), 30_000);
    expect(alive(gateway)).toBe(true);
  }, 180_000);
});

describe("MCP results, in a gateway with a 128 MB heap", () => {
  let servers: OversizedMcp[] = [];
  afterEach(async () => {
    await Promise.all(servers.map((s) => s.close()));
    servers = [];
  });

  it("a 200 MB answer over HTTP (JSON or SSE) or stdio fails the call clearly and the gateway stays up", async () => {
    servers = [await startOversizedMcp(), await startOversizedMcp({ sse: true })];
    const [json, sse] = servers;
    const env = await gatewayEnv({ NODE_OPTIONS: "--max-old-space-size=128" });
    writeFileSync(
      join(home!, "config.yaml"),
      `mcp_servers:
  big_json:
    url: ${json!.url}
    transport: streamable_http
  big_sse:
    url: ${sse!.url}
    transport: streamable_http
  big_stdio:
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(OVERSIZED_STDIO)}]
`,
    );
    gateway = await startGateway(env);
    const log = () => readFileSync(join(home!, "logs", "herald.log"), "utf8");
    await eventually(
      () => (log().match(/mcp server connected/g) ?? []).length === 3,
      () => `MCP servers not connected:\n${gateway!.output()}`,
    );
    const dump = (server: string) => ({
      toolCalls: [{ name: `mcp_${server}_dump`, arguments: { megabytes: 200 } }],
    });
    llm!.script(dump("big_json"), dump("big_sse"), dump("big_stdio"), { text: "dumped" });
    telegram!.userSends({ chatId: 111, fromId: 111, text: "dump everything" });
    await eventually(
      () => texts(telegram!).includes("dumped") || !alive(gateway!),
      () => `no answer:\n${gateway!.output()}`,
      90_000,
    );
    expect(alive(gateway), gateway.output()).toBe(true);
    const results = llm!.requests[3]!.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
    for (const [k, server] of ["big_json", "big_sse", "big_stdio"].entries())
      expect(results[k]).toMatch(
        new RegExp(
          `^error: mcp_${server}_dump failed: MCP server '${server}' sent a message over 10 MB; Herald stopped reading it`,
        ),
      );
    // The HTTP servers were cut off early, not read to the end.
    for (const server of servers) {
      expect(server.cutShort()).toBe(true);
      expect(server.sentBytes()).toBeLessThan(100 * 1024 * 1024);
    }
  }, 180_000);
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
