/**
 * External memory providers through the whole gateway, with Honcho's and Mem0's fake APIs: each
 * exchange reaches both under the user's peer and the session's id after the reply; what they know
 * about the user comes as a note before the next message (the system prompt unchanged), never in
 * another user's turn nor, by default, in a group; the agent asks them with `memory_provider_query`;
 * and while they are down turns still run, the outage is logged once, and the backlog delivers what
 * waited once they are back.
 */
import { afterEach, describe, expect, it } from "vitest";
import { sessionIdOf, userPeerId } from "../../agent/tools/memory-providers/ids.js";
import { createLogger } from "../../core/logger.js";
import { FakeChatAdapter } from "../fakes/chat/index.js";
import { type FakeHoncho, startFakeHoncho } from "../fakes/honcho/index.js";
import { type FakeMem0, startFakeMem0 } from "../fakes/mem0/index.js";
import { type Harness, startHarness } from "../helpers/gateway-harness.js";

let harness: Harness | undefined;
let honcho: FakeHoncho | undefined;
let mem0: FakeMem0 | undefined;

afterEach(async () => {
  await harness?.stop();
  await honcho?.close();
  await mem0?.close();
  harness = honcho = mem0 = undefined;
});

const alicePeer = userPeerId("fakechat", "alice");
const bob = { chat: { platform: "fakechat", chatId: "dm-bob" }, sender: { id: "bob", name: "Bob" } };
const aliceInGroup = {
  chat: { platform: "fakechat", chatId: "group-1" },
  chatType: "group" as const,
  sender: { id: "alice", name: "Alice" },
};

interface LogLine {
  level: number;
  msg: string;
  provider?: string;
}

/** A gateway with the fake chat and both providers on their fakes; `say` waits for each reply. */
async function start(providers = "") {
  honcho = await startFakeHoncho({ apiKey: "hk" });
  mem0 = await startFakeMem0({ apiKey: "mk" });
  let logged = "";
  let chat!: FakeChatAdapter;
  const h = await startHarness({
    env: {
      GATEWAY_ALLOWED_USERS: "fakechat:alice,fakechat:bob",
      HONCHO_URL: honcho.url,
      HONCHO_API_KEY: "hk",
      MEM0_URL: mem0.url,
      MEM0_API_KEY: "mk",
    },
    // Asked every turn, so what a fake learns shows in the next one.
    configYaml: `memory:\n  providers:\n    insights_ttl_s: 0\n${providers}`,
    adapters: () => {
      chat = new FakeChatAdapter();
      return [chat];
    },
    logger: createLogger({ level: "info", destination: { write: (line: string) => (logged += line) } }),
  });
  harness = h;
  let replies = 0;
  const say = async (text: string, who: Record<string, unknown> = {}) => {
    await chat.inject({ text, chat: { platform: "fakechat", chatId: "dm-alice" }, ...who });
    return (await chat.waitForTexts(++replies, 30_000)).at(-1);
  };
  const logs = () =>
    logged
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as LogLine);
  return { h, say, logs };
}

/** The system notes of the model's last request (after its system prompt). */
function notes(h: Harness): string[] {
  const messages = h.llm.requests.at(-1)?.messages ?? [];
  return messages
    .slice(1)
    .filter((m) => m.role === "system")
    .map((m) => String(m.content));
}

/** Alice's messages at Honcho, in order, across sessions. */
function atHoncho(peer = alicePeer): string[] {
  return [...honcho!.sessions("herald").keys()]
    .flatMap((s) => honcho!.messages("herald", s))
    .filter((m) => m.peer_id === peer)
    .map((m) => m.content);
}

describe("memory providers in the gateway", () => {
  it("records exchanges under the user's peer and session, and brings the user's insights to the next turn only", async () => {
    const { h, say } = await start();
    await say("I moved to Lisbon last month");
    await expect.poll(() => atHoncho(), { timeout: 15_000 }).toEqual(["I moved to Lisbon last month"]);
    const [sessionId, session] = [...honcho!.sessions("herald").entries()][0]!;
    const key = String((session.metadata as Record<string, unknown>)["herald_session_key"]);
    expect(key).toContain("dm-alice");
    expect(sessionId).toBe(sessionIdOf(key));
    const reply = honcho!.messages("herald", sessionId).find((m) => m.peer_id === "herald");
    expect(reply?.content).toBe("echo: I moved to Lisbon last month");
    expect(honcho!.peers("herald").get("herald")).toEqual({ observe_me: false });
    await expect.poll(() => mem0!.memories.length, { timeout: 15_000 }).toBe(1);
    expect(mem0!.memories[0]).toMatchObject({
      memory: "I moved to Lisbon last month",
      user_id: alicePeer,
      agent_id: "herald",
      run_id: sessionIdOf(key),
    });
    const firstPrompt = h.llm.requests.at(-1)?.messages[0]?.content;

    honcho!.know(alicePeer, "Alice lives in Lisbon and cycles to work.");
    await say("what should I wear today?");
    const [note] = notes(h);
    expect(note).toMatch(/^\[What external memory knows about the person you are talking with/);
    expect(note).toContain("Alice lives in Lisbon and cycles to work.");
    expect(note).toContain("I moved to Lisbon last month");
    // After the stable prefix, right before the message; the system prompt is the same bytes.
    const messages = h.llm.requests.at(-1)!.messages;
    expect(messages.at(-2)?.role).toBe("system");
    expect(messages.at(-1)?.content).toBe("what should I wear today?");
    expect(messages[0]?.content).toBe(firstPrompt);

    // Another user's turn carries nothing of Alice's.
    await say("hello there", bob);
    expect(JSON.stringify(h.llm.requests.at(-1)?.messages)).not.toContain("Lisbon");
    // A group gets no note by default, though the exchange is recorded under its sender.
    await say("anyone for lunch?", aliceInGroup);
    expect(notes(h)).toEqual([]);
    await expect.poll(() => atHoncho().at(-1), { timeout: 15_000 }).toBe("anyone for lunch?");

    // The agent asks the providers itself.
    h.llm.script(
      { toolCalls: [{ name: "memory_provider_query", arguments: { query: "Where does the user live?" } }] },
      { text: "You live in Lisbon." },
    );
    expect(await say("where do I live again?")).toBe("You live in Lisbon.");
    const tool = h.llm.requests.at(-1)?.messages.find((m) => m.role === "tool");
    expect(String(tool?.content)).toContain("honcho: Alice lives in Lisbon");
    expect(String(tool?.content)).toContain("mem0: - I moved to Lisbon last month");
  });

  it("runs turns while the providers are down, logs the outage once, and delivers the backlog after", async () => {
    const { h, say, logs } = await start();
    honcho!.down();
    mem0!.down();
    for (const text of ["first while down", "second while down", "third while down"]) {
      expect(await say(text)).toBeTruthy();
    }
    const down = () => logs().filter((l) => l.msg.startsWith("memory provider unavailable"));
    await expect.poll(() => down().length, { timeout: 10_000 }).toBe(2);
    expect(
      down()
        .map((l) => l.provider)
        .sort(),
    ).toEqual(["honcho", "mem0"]);
    expect(notes(h)).toEqual([]);
    honcho!.up();
    mem0!.up();
    await expect
      .poll(() => atHoncho(), { timeout: 30_000 })
      .toEqual(["first while down", "second while down", "third while down"]);
    await expect
      .poll(() => mem0!.memories.map((m) => m.memory), { timeout: 30_000 })
      .toEqual(["first while down", "second while down", "third while down"]);
    expect(down()).toHaveLength(2);
    expect(logs().filter((l) => l.msg === "memory provider available again")).toHaveLength(2);
    expect(h.state.database.prepare("SELECT count(*) AS n FROM memory_provider_backlog").get()).toEqual({
      n: 0,
    });
  });

  it("keeps the backlog across a restart", async () => {
    const { h, say } = await start();
    honcho!.down();
    mem0!.down();
    await say("said before the restart");
    const waiting = () =>
      (h.state.database.prepare("SELECT count(*) AS n FROM memory_provider_backlog").get() as { n: number })
        .n;
    await expect.poll(waiting, { timeout: 10_000 }).toBe(2);
    await h.restart();
    honcho!.up();
    mem0!.up();
    await expect.poll(() => atHoncho(), { timeout: 30_000 }).toEqual(["said before the restart"]);
    await expect
      .poll(() => mem0!.memories.map((m) => m.memory), { timeout: 30_000 })
      .toEqual(["said before the restart"]);
  });

  it("does not wait for a slow provider past insights_timeout_ms", async () => {
    const { h, say } = await start("    insights_timeout_ms: 300\n");
    await say("I grow tomatoes");
    await expect.poll(() => mem0!.memories.length, { timeout: 15_000 }).toBe(1);
    honcho!.know(alicePeer, "Alice grows tomatoes.");
    honcho!.slow(20_000);
    const asked = () => honcho!.requests.filter((r) => r.path.endsWith(`/peers/${alicePeer}/chat`)).length;
    const before = asked();
    await say("what should I plant next?");
    const [note] = notes(h);
    // Mem0 answered in time; Honcho's answer was not waited for.
    expect(note).toContain("I grow tomatoes");
    expect(note).not.toContain("Alice grows tomatoes.");
    // While that request is out, the next turn sends no other (and does not wait for it).
    await say("and after that?");
    expect(notes(h)[0]).toContain("I grow tomatoes");
    expect(asked()).toBe(before + 1);
  });
});
