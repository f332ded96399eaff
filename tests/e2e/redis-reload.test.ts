/**
 * Reloads on Redis, with real processes: `/reload-mcp` and `/reload-plugins` sent in a chat reach the
 * `herald worker` processes (the gateway announces them on the queue's channel), which reload and log
 * the outcome, so their next turns use the new MCP servers and plugin tools; the chat is told how many
 * workers heard it (none included); a turn running through the reload still answers; a malformed
 * announcement on the channel is skipped and the worker goes on.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { RedisNames } from "../../agent/queue/bull-names.js";
import { type FakeLlmRequest, messageText } from "../fakes/llm/index.js";
import type { FakeTelegram } from "../fakes/telegram/index.js";
import { clusterPerTest } from "../helpers/cluster-per-test.js";
import { eventually, type HeraldCluster, type HeraldProcess } from "../helpers/herald-cluster.js";
import { EVERYTHING_ENTRY } from "../helpers/mcp-servers.js";
import { redisPerFile } from "../helpers/redis.js";

const redis = redisPerFile();
let publisher: Redis | undefined;
const dirs: string[] = [];
const savedPluginsDir = process.env["HERALD_PLUGINS_DIR"];

// vitest runs afterEach hooks as a stack: the publisher disconnects, then the cluster stops, then the
// folders go and the environment is restored.
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  if (savedPluginsDir === undefined) delete process.env["HERALD_PLUGINS_DIR"];
  else process.env["HERALD_PLUGINS_DIR"] = savedPluginsDir;
});
const cluster = clusterPerTest(redis);
afterEach(() => {
  publisher?.disconnect();
  publisher = undefined;
});

/** Workers log at info here: each reload's outcome is an info line. */
const INFO = { env: { HERALD_LOG_LEVEL: "info" } };

/** The cluster of a test; each test starts the gateway itself, once its config is written. */
const start = () => cluster.start({ startGateway: false });

/**
 * Sends `text` as the user (a command when it starts with '/') and resolves with the bot's messages
 * sent since (progress lines the bot deleted left out), once one of them satisfies `done`.
 */
async function exchange(
  c: HeraldCluster,
  tg: FakeTelegram,
  text: string,
  done: (reply: string) => boolean,
): Promise<string[]> {
  const before = new Set(tg.botMessages(111).map((m) => m.message_id));
  tg.userSends({
    chatId: 111,
    fromId: 111,
    text,
    ...(text.startsWith("/")
      ? { extra: { entities: [{ type: "bot_command", offset: 0, length: text.length }] } }
      : {}),
  });
  let since: string[] = [];
  await eventually(
    () => {
      since = tg
        .botMessages(111)
        .filter((m) => !before.has(m.message_id))
        .map((m) => m.text ?? "");
      return since.some(done);
    },
    () => `no fitting answer to "${text}" (got ${JSON.stringify(since)}):\n${c.output()}`,
  );
  return since;
}

/** Waits until `proc` has logged a JSON line with this `msg` that contains `detail`. */
async function logged(proc: HeraldProcess, msg: string, detail = ""): Promise<void> {
  const hit = () =>
    proc
      .output()
      .split("\n")
      .some((line) => line.includes(`"msg":"${msg}"`) && line.includes(detail));
  await eventually(hit, () => `${proc.name} never logged "${msg}" with ${detail}:\n${proc.output()}`);
}

const lastUser = (request: FakeLlmRequest) =>
  messageText([...request.messages].reverse().find((m) => m.role === "user"));
const systemPrompt = (request: FakeLlmRequest | undefined) => messageText(request?.messages[0]);

const mcpConfig = (server: string) =>
  `mcp_servers:\n  ${server}:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(EVERYTHING_ENTRY)}, stdio]\n`;

describe("reloads on Redis workers", () => {
  it("/reload-mcp restarts every worker's MCP servers from its config.yaml; a running turn still answers", async () => {
    const { c, tg, model } = await start();
    // "echo <server> <word>" calls that server's echo tool; "slow …" holds the first answer 5 s.
    model.setDefault((request) => {
      const last = request.messages.at(-1);
      if (last?.role === "tool") return { text: `tool said: ${messageText(last)}` };
      const [mode, server, word] = lastUser(request).split(" ");
      const call = { name: `mcp_${server}_echo`, arguments: { message: word } };
      return mode === "slow" ? { toolCalls: [call], delayMs: 5_000 } : { toolCalls: [call] };
    });
    const homes = [c.home, join(c.home, "wa"), join(c.home, "wb")];
    const configure = (server: string) => {
      for (const home of homes) {
        mkdirSync(home, { recursive: true });
        writeFileSync(join(home, "config.yaml"), mcpConfig(server));
      }
    };
    configure("old");
    await c.startGateway();
    const workers = [
      await c.startWorker("fake-model", 1, { home: homes[1], ...INFO }),
      await c.startWorker("fake-model", 1, { home: homes[2], ...INFO }),
    ];
    // Each worker starts its server in the background, or, once another worker's list of it is cached
    // in the gateway's state.db, offers the cached tools and starts it on the first call: wait until
    // both have its tools.
    for (const worker of workers)
      await eventually(
        () =>
          worker
            .output()
            .split("\n")
            .some(
              (line) =>
                (line.includes('"msg":"mcp server connected"') && line.includes('"mcpServer":"old"')) ||
                (line.includes('"msg":"mcp server idle until used"') && line.includes('"server":"old"')),
            ),
        () => `${worker.name} never had the tools of "old":\n${worker.output()}`,
      );
    const first = await exchange(c, tg, "echo old first", (t) => t.startsWith("tool said:"));
    expect(first.at(-1)).toBe("tool said: Echo: first");

    // A turn whose model answer is still on its way when the reload comes.
    tg.userSends({ chatId: 111, fromId: 111, text: "slow old during" });
    await eventually(
      () => model.requests.some((r) => lastUser(r) === "slow old during"),
      () => `the slow turn never reached the model:\n${c.output()}`,
    );
    configure("fresh");
    const reload = await exchange(c, tg, "/reload-mcp", (t) => t.startsWith("Told"));
    expect(reload).toContain("Reloading MCP servers on the workers: fresh.");
    expect(reload.at(-1)).toBe(
      "Told 2 workers to reload the MCP servers; each reads mcp_servers: from its config.yaml again and logs the outcome (herald logs --worker).",
    );
    for (const worker of workers)
      await logged(worker, "mcp servers reloaded", '"servers":["fresh: connected"]');
    // The running turn kept its tools: its call reached the old server, stopped under it, and the
    // model was told so; the turn answered.
    await eventually(
      () => tg.botMessages(111).some((m) => m.text?.startsWith("tool said: error")),
      () => `the turn running through the reload did not answer:\n${c.output()}`,
    );
    const during = tg.botMessages(111).find((m) => m.text?.startsWith("tool said: error"))?.text;
    expect(during).toMatch(/MCP server 'old' is not available: it is stopped/);

    // The next turn, on either worker, has the new server (the gateway grants its toolset too).
    const next = await exchange(c, tg, "echo fresh after", (t) => t.startsWith("tool said:"));
    expect(next.at(-1)).toBe("tool said: Echo: after");
    const asked = model.requests.find((r) => lastUser(r) === "echo fresh after");
    expect(systemPrompt(asked)).toContain("mcp_fresh_echo");
    expect(systemPrompt(asked)).not.toContain("mcp_old_");
  }, 90_000);

  it("/reload-plugins reloads the gateway's plugins and the worker's, and says how many workers it told", async () => {
    const dir = mkdtempSync(join(tmpdir(), "herald-reload-plugins-"));
    dirs.push(dir);
    mkdirSync(join(dir, "greeter"));
    // An .mjs entry: the cluster runs Herald from source under tsx, which compiles a .js entry of a
    // folder without "type": "module" to CommonJS and caches it whatever the ?v= query, so a reload
    // would get the old copy there (plain Node, as the built dist/ runs, re-imports either).
    writeFileSync(
      join(dir, "greeter/plugin.json"),
      JSON.stringify({ name: "greeter", version: "1.0.0", main: "index.mjs" }),
    );
    const plugin = (version: string, extra = "") => `
import { definePlugin, z } from "herald/plugin";
export default definePlugin({
  tools: [{ name: "greet", description: "greets", parameters: z.object({}),
    execute: async () => "hello ${version} from " + process.pid }${extra}],
});
`;
    writeFileSync(join(dir, "greeter/index.mjs"), plugin("v1"));
    // Gateway and worker share the folder (every process the cluster spawns inherits this).
    process.env["HERALD_PLUGINS_DIR"] = dir;
    const { c, tg, model } = await start();
    model.setDefault((request) => {
      const last = request.messages.at(-1);
      if (last?.role === "tool") return { text: `tool said: ${messageText(last)}` };
      return { toolCalls: [{ name: "greet", arguments: {} }] };
    });
    await c.startGateway();
    // No worker yet: the gateway reloads its own plugins and says that no worker heard it.
    const alone = await exchange(c, tg, "/reload-plugins", (t) => t.startsWith("Reloaded"));
    expect(alone.at(-1)).toBe(
      "Reloaded the plugins here (/plugins shows them) and told no worker: none is running. A worker loads the plugins when it starts.",
    );

    const worker = await c.startWorker("fake-model", 1, INFO);
    const first = await exchange(c, tg, "greet me", (t) => t.startsWith("tool said:"));
    expect(first.at(-1)).toBe(`tool said: hello v1 from ${worker.child.pid}`);
    expect(systemPrompt(model.requests.at(-1))).not.toContain("wave");

    // The plugin changes: its tool answers differently and a second tool comes.
    writeFileSync(
      join(dir, "greeter/index.mjs"),
      plugin(
        "v2",
        `, { name: "wave", description: "waves", parameters: z.object({}), execute: async () => "👋" }`,
      ),
    );
    const reload = await exchange(c, tg, "/reload-plugins", (t) => t.startsWith("Reloaded"));
    expect(reload).toContain("🔄 Reloading plugins here and on the workers…");
    expect(reload.at(-1)).toBe(
      "Reloaded the plugins here (/plugins shows them) and told 1 worker to reload theirs; each logs the outcome (herald logs --worker).",
    );
    await logged(worker, "plugins reloaded", '"plugins":["greeter: loaded"]');
    const after = await exchange(c, tg, "greet me again", (t) => t.startsWith("tool said:"));
    expect(after.at(-1)).toBe(`tool said: hello v2 from ${worker.child.pid}`);
    expect(systemPrompt(model.requests.find((r) => lastUser(r) === "greet me again"))).toContain("wave");
  }, 90_000);

  it("skips a malformed announcement, logging it, and the worker goes on", async () => {
    const { c, tg } = await start();
    await c.startGateway();
    const worker = await c.startWorker("fake-model", 1, INFO);
    publisher = new Redis(redis.url);
    const channel = new RedisNames(c.prefix).channel("announcements");
    for (const bad of [
      "not json",
      JSON.stringify({ type: "reload", what: "everything" }),
      JSON.stringify({ type: "session-ended" }),
      JSON.stringify({ type: "shutdown" }),
    ]) {
      // PUBLISH answers how many subscribers got it: the worker did.
      expect(await publisher.publish(channel, bad)).toBe(1);
    }
    await eventually(
      () => worker.output().split('"msg":"malformed announcement skipped"').length - 1 === 4,
      () => `the worker did not log the 4 malformed announcements:\n${worker.output()}`,
    );
    expect(worker.output()).toContain('"received":"not json"');
    // It still runs turns and still hears announcements.
    const reply = await exchange(c, tg, "still there?", (t) => t.startsWith("echo:"));
    expect(reply.at(-1)).toBe("echo: still there?");
    expect(await publisher.publish(channel, JSON.stringify({ type: "reload", what: "plugins" }))).toBe(1);
    await logged(worker, "plugins reloaded");
    expect(worker.child.exitCode).toBeNull();
  }, 60_000);
});
