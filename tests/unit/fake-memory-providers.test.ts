/**
 * The fake Honcho and Mem0 APIs against the vendors' own SDKs as clients (`@honcho-ai/sdk`'s Honcho,
 * `mem0ai`'s MemoryClient with `host` on the fake): what the SDKs send is what the fakes take, and what
 * the fakes answer is what the SDKs parse. Herald's providers are then tested against these fakes.
 */
import { Honcho } from "@honcho-ai/sdk";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeHoncho, startFakeHoncho } from "../fakes/honcho/index.js";
import { type FakeMem0, startFakeMem0 } from "../fakes/mem0/index.js";

let honchoFake: FakeHoncho | undefined;
let mem0Fake: FakeMem0 | undefined;
afterEach(async () => {
  await honchoFake?.close();
  await mem0Fake?.close();
  honchoFake = mem0Fake = undefined;
});

describe("fake Honcho through @honcho-ai/sdk", () => {
  it("gets or creates peers and sessions, adds and lists messages, and answers the dialectic", async () => {
    honchoFake = await startFakeHoncho({ apiKey: "hk" });
    const honcho = new Honcho({ baseURL: honchoFake.url, apiKey: "hk", workspaceId: "ws1", maxRetries: 0 });
    const alice = await honcho.peer("alice");
    const bot = await honcho.peer("bot", { configuration: { observeMe: false } });
    const session = await honcho.session("s1");
    await session.addPeers([alice, [bot, { observeMe: false }]]);
    const added = await session.addMessages([alice.message("I drink green tea"), bot.message("Noted.")]);
    expect(added.map((m) => [m.peerId, m.content])).toEqual([
      ["alice", "I drink green tea"],
      ["bot", "Noted."],
    ]);
    const page = await session.messages();
    expect(page.items.map((m) => m.content)).toEqual(["I drink green tea", "Noted."]);
    expect(honchoFake.peers("ws1").get("bot")).toEqual({ observe_me: false });
    expect(Object.keys(honchoFake.sessions("ws1").get("s1")?.peers ?? {})).toEqual(["alice", "bot"]);
    expect(await alice.chat("what does alice drink?")).toBeNull();
    honchoFake.know("alice", "Alice drinks green tea.");
    expect(await alice.chat("what does alice drink?")).toBe("Alice drinks green tea.");
    const chat = honchoFake.requests.filter((r) => r.path === "/v3/workspaces/ws1/peers/alice/chat").at(-1);
    expect(chat?.body).toMatchObject({ query: "what does alice drink?", stream: false });
    expect(chat?.authorization).toBe("Bearer hk");
  });

  it("refuses a wrong key as the SDK's authentication error", async () => {
    honchoFake = await startFakeHoncho({ apiKey: "hk" });
    const honcho = new Honcho({
      baseURL: honchoFake.url,
      apiKey: "wrong",
      workspaceId: "ws1",
      maxRetries: 0,
    });
    await expect(honcho.peer("alice")).rejects.toMatchObject({ status: 401 });
  });
});

describe("fake Mem0 through mem0ai's MemoryClient", () => {
  // The SDK reads its telemetry switch when it loads: load it with telemetry off (no request leaves).
  let MemoryClient: typeof import("mem0ai").MemoryClient;
  beforeAll(async () => {
    process.env["MEM0_TELEMETRY"] = "false";
    ({ MemoryClient } = await import("mem0ai"));
  });

  it("pings, adds an exchange with its entity ids, and finds it by user", async () => {
    mem0Fake = await startFakeMem0({ apiKey: "mk" });
    const client = new MemoryClient({ apiKey: "mk", host: mem0Fake.url });
    await client.ping();
    await client.add(
      [
        { role: "user", content: "I am allergic to peanuts" },
        { role: "assistant", content: "I will remember that." },
      ],
      { userId: "u1", agentId: "herald", runId: "r1", metadata: { platform: "telegram" } },
    );
    const add = mem0Fake.requests.find((r) => r.path === "/v3/memories/add/");
    expect(add?.body).toMatchObject({ user_id: "u1", agent_id: "herald", run_id: "r1" });
    expect(add?.authorization).toBe("Token mk");
    mem0Fake.remember("u2", "Allergic to nothing, loves peanuts");
    const found = await client.search("peanuts allergy", { filters: { user_id: "u1" }, topK: 5 });
    expect(found.results.map((m) => m.memory)).toEqual(["I am allergic to peanuts"]);
    const all = await client.getAll({ filters: { user_id: "u2" } });
    expect(all.results.map((m) => m.memory)).toEqual(["Allergic to nothing, loves peanuts"]);
  });

  it("refuses a wrong key as the SDK's authentication error", async () => {
    mem0Fake = await startFakeMem0({ apiKey: "mk" });
    const client = new MemoryClient({ apiKey: "wrong", host: mem0Fake.url });
    await expect(client.ping()).rejects.toMatchObject({ name: "AuthenticationError" });
  });
});
