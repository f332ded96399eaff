/**
 * Plugins where the tools run: on Redis, a `herald worker` process loads the plugins itself, runs their
 * tools and tool/reply hooks, and a plugin with `send` reaches the chat through the gateway's state API
 * and outbox; the gateway runs the plugin's command.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { clusterPerTest } from "../helpers/cluster-per-test.js";
import { eventually } from "../helpers/herald-cluster.js";
import { redisPerFile } from "../helpers/redis.js";

const redis = redisPerFile();
let dir: string | undefined;
const saved = process.env["HERALD_PLUGINS_DIR"];

// Registered before the cluster's: runs after it has stopped the processes that read the folder.
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  if (saved === undefined) delete process.env["HERALD_PLUGINS_DIR"];
  else process.env["HERALD_PLUGINS_DIR"] = saved;
  dir = undefined;
});
const cluster = clusterPerTest(redis);

const PINGER = `
import { definePlugin, z } from "herald/plugin";
export default definePlugin({
  tools: [{ name: "ping_chat", description: "send a ping to the chat", parameters: z.object({}),
    execute: async (_a, ctx) => { await ctx.send("pong from the plugin"); return "sent on " + process.pid; } }],
  commands: { pinger: { description: "where am I", run: () => "pinger here" } },
  hooks: { beforeReply: ({ text }) => ({ text: text + " ✓" }) },
});
`;

describe("plugins on Redis workers", () => {
  it("runs a plugin's tool and hooks in the worker, and its send reaches the chat once", async () => {
    dir = mkdtempSync(join(tmpdir(), "herald-plugins-redis-"));
    mkdirSync(join(dir, "pinger"));
    writeFileSync(
      join(dir, "pinger/plugin.json"),
      JSON.stringify({ name: "pinger", version: "1.0.0", capabilities: ["send"] }),
    );
    writeFileSync(join(dir, "pinger/index.js"), PINGER);
    // Every process the cluster spawns inherits this environment: gateway and worker share the folder.
    process.env["HERALD_PLUGINS_DIR"] = dir;
    const { c, tg, model: llm } = await cluster.start();
    const worker = await c.startWorker("fake-model", 1);
    llm.script({ toolCalls: [{ name: "ping_chat", arguments: {} }] }, { text: "done" });
    tg.userSends({ chatId: 111, fromId: 111, text: "ping the chat" });
    const texts = () => tg.botMessages(111).map((m) => m.text ?? "");
    await eventually(
      () => texts().includes("done ✓"),
      () => `${texts().join(" | ")}:\n${c.output()}`,
    );
    // The plugin's message once, the reply with the hook's mark (the progress line is the tool's).
    expect(texts().filter((t) => t === "pong from the plugin")).toHaveLength(1);
    // The tool ran in the worker process, not the gateway.
    const result = String(llm.requests[1]!.messages.find((m) => m.role === "tool")?.content);
    expect(result).toBe(`sent on ${worker.child.pid}`);

    tg.userSends({
      chatId: 111,
      fromId: 111,
      text: "/pinger",
      extra: { entities: [{ type: "bot_command", offset: 0, length: 7 }] },
    });
    await eventually(
      () => tg.botMessages(111).length >= 3,
      () => c.output(),
    );
    expect(tg.botMessages(111).at(-1)?.text).toBe("pinger here");
  }, 60_000);
});
