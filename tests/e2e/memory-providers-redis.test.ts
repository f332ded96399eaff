/**
 * Memory providers with a worker on Redis: real `herald gateway` and `herald worker` processes. Only the
 * gateway holds the providers' keys and calls them; the worker gets the note and the tool's answers
 * through the gateway's state API, and the exchanges reach the providers from the gateway.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { userPeerId } from "../../agent/tools/memory-providers/ids.js";
import { type FakeHoncho, startFakeHoncho } from "../fakes/honcho/index.js";
import { type FakeLlm, startFakeLlm } from "../fakes/llm/index.js";
import { type FakeMem0, startFakeMem0 } from "../fakes/mem0/index.js";
import { HeraldCluster } from "../helpers/herald-cluster.js";
import { redisPerFile } from "../helpers/redis.js";

const redis = redisPerFile();
let llm: FakeLlm | undefined;
let cluster: HeraldCluster | undefined;
let honcho: FakeHoncho | undefined;
let mem0: FakeMem0 | undefined;

afterEach(async () => {
  await cluster?.stop();
  await llm?.close();
  await honcho?.close();
  await mem0?.close();
  cluster = llm = honcho = mem0 = undefined;
});

describe("memory providers with a worker on Redis", () => {
  it("gives the worker's turn the note and the tool's answers through the gateway", {
    timeout: 120_000,
  }, async () => {
    llm = await startFakeLlm();
    honcho = await startFakeHoncho({ apiKey: "hk" });
    mem0 = await startFakeMem0({ apiKey: "mk" });
    cluster = new HeraldCluster({
      redisUrl: redis.url,
      llmUrl: llm.url,
      gatewayEnv: { HONCHO_URL: honcho.url, HONCHO_API_KEY: "hk", MEM0_URL: mem0.url, MEM0_API_KEY: "mk" },
    });
    writeFileSync(join(cluster.home, "config.yaml"), "memory:\n  providers:\n    insights_ttl_s: 0\n");
    await cluster.startGateway();
    // The worker knows a provider is configured (it offers the tool) but holds no key.
    await cluster.startWorker("fake-model", 1, { env: { HONCHO_URL: honcho.url, MEM0_URL: mem0.url } });
    const peer = userPeerId("api", "api");

    expect(await cluster.chat("I keep bees in the garden", "bees")).toBeTruthy();
    await expect
      .poll(() => mem0!.memories.map((m) => m.memory), { timeout: 30_000 })
      .toEqual(["I keep bees in the garden"]);
    honcho.know(peer, "Keeps bees; likes honey.");
    await cluster.chat("what should I do this weekend?", "bees");
    const note = llm.requests
      .at(-1)
      ?.messages.slice(1)
      .find((m) => m.role === "system");
    expect(String(note?.content)).toContain("Keeps bees; likes honey.");
    expect(String(note?.content)).toContain("I keep bees in the garden");

    llm.script(
      {
        toolCalls: [{ name: "memory_provider_query", arguments: { query: "What are the user's hobbies?" } }],
      },
      { text: "Beekeeping." },
    );
    expect(await cluster.chat("what are my hobbies?", "bees")).toBe("Beekeeping.");
    const tool = llm.requests.at(-1)?.messages.find((m) => m.role === "tool");
    expect(String(tool?.content)).toContain("honcho: Keeps bees; likes honey.");
    // Every provider call came from the gateway's key.
    expect(new Set(honcho.requests.map((r) => r.authorization))).toEqual(new Set(["Bearer hk"]));
  });
});
