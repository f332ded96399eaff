/**
 * MCP on Redis scale-out, with real processes: the gateway decides a turn's toolsets from its own
 * config.yaml, and the `herald worker` process that runs the turn starts the MCP server itself and calls it.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { type FakeLlm, messageText, startFakeLlm } from "../fakes/llm/index.js";
import { HeraldCluster } from "../helpers/herald-cluster.js";
import { EVERYTHING_ENTRY } from "../helpers/mcp-servers.js";
import { redisPerFile } from "../helpers/redis.js";

const redis = redisPerFile();
let llm: FakeLlm | undefined;
let cluster: HeraldCluster | undefined;

afterEach(async () => {
  await cluster?.stop();
  await llm?.close();
  cluster = undefined;
  llm = undefined;
});

const CONFIG = `mcp_servers:\n  everything:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(EVERYTHING_ENTRY)}, stdio]\n`;

it("a worker process runs the MCP server and calls its tools", async () => {
  llm = await startFakeLlm();
  llm.setDefault((request) => {
    const last = request.messages.at(-1);
    if (last?.role === "tool") return { text: `tool said: ${messageText(last)}` };
    return { toolCalls: [{ name: "mcp_everything_echo", arguments: { message: "from a worker" } }] };
  });
  cluster = new HeraldCluster({ redisUrl: redis.url, llmUrl: llm.url });
  writeFileSync(join(cluster.home, "config.yaml"), CONFIG);
  await cluster.startGateway();
  // The worker's own HERALD_HOME (the cluster names it by the process count) holds the same servers.
  const workerHome = join(cluster.home, `worker-${cluster.processes.length}`);
  mkdirSync(workerHome, { recursive: true });
  writeFileSync(join(workerHome, "config.yaml"), CONFIG);
  await cluster.startWorker();
  const url = cluster.url;
  // The server connects in the background after the worker starts: the first turns may not have it yet.
  let reply = "";
  await expect
    .poll(
      async () => {
        const res = await fetch(`${url}/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: "herald", messages: [{ role: "user", content: "echo please" }] }),
        });
        const body = (await res.json()) as { choices?: { message: { content: string } }[] };
        reply = body.choices?.[0]?.message.content ?? "";
        return reply;
      },
      { timeout: 30_000, interval: 500 },
    )
    .toBe("tool said: Echo: from a worker");
  // The call loaded the server's toolset: the next request carries its schemas.
  const after = llm.requests.at(-1);
  expect((after?.tools ?? []).map((t) => t.function.name)).toContain("mcp_everything_echo");
});
