/**
 * External memory providers per agent, through the whole gateway with Honcho's and Mem0's fake APIs:
 * the same user talks to the default agent and to `family`; each agent's exchanges reach Honcho in a
 * workspace of its own (with its own assistant peer) and Mem0 under an `agent_id` of its own, and each
 * agent's note shows only what the user told that agent. `memory_providers` picks an agent's providers
 * (`[mem0]`) or turns them off (`false`), and an exchange that waited through an outage still goes to
 * its agent's records.
 */
import { afterEach, describe, expect, it } from "vitest";
import { userPeerId } from "../../agent/tools/memory-providers/ids.js";
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

const alice = userPeerId("fakechat", "alice");

/** A gateway with agents `family` (every provider), `work` (Mem0 only), `quiet` (none), each on a chat. */
async function start() {
  // Honcho's fake concludes from what a peer said in the workspace asked.
  honcho = await startFakeHoncho({ apiKey: "hk", learns: true });
  mem0 = await startFakeMem0({ apiKey: "mk" });
  let chat!: FakeChatAdapter;
  const configYaml = [
    "memory:",
    "  providers:",
    "    insights_ttl_s: 0",
    "agents:",
    "  - name: family",
    "  - name: work",
    "    memory_providers: [mem0]",
    "  - name: quiet",
    "    memory_providers: false",
    "routes:",
    ...["family", "work", "quiet"].flatMap((a) => [`  - agent: ${a}`, `    chat: "fakechat:dm-${a}"`]),
    "",
  ].join("\n");
  const h = await startHarness({
    env: {
      GATEWAY_ALLOWED_USERS: "fakechat:alice",
      HONCHO_URL: honcho.url,
      HONCHO_API_KEY: "hk",
      MEM0_URL: mem0.url,
      MEM0_API_KEY: "mk",
    },
    configYaml,
    adapters: () => {
      chat = new FakeChatAdapter();
      return [chat];
    },
  });
  harness = h;
  let replies = 0;
  /** Alice says `text` in the chat routed to `agent` (`default`: her own DM); waits for the reply. */
  const say = async (agent: string, text: string) => {
    await chat.inject({ text, chat: { platform: "fakechat", chatId: `dm-${agent}` } });
    return (await chat.waitForTexts(++replies, 30_000)).at(-1);
  };
  return { h, say };
}

/** The note before the message in the model's last request, or "" without one. */
function note(h: Harness): string {
  const messages = h.llm.requests.at(-1)?.messages ?? [];
  return messages
    .slice(1)
    .filter((m) => m.role === "system")
    .map((m) => String(m.content))
    .join("\n");
}

/** What Alice said in Honcho's `workspace`, across its sessions. */
function inWorkspace(workspace: string): string[] {
  return [...honcho!.sessions(workspace).keys()]
    .flatMap((s) => honcho!.messages(workspace, s))
    .filter((m) => m.peer_id === alice)
    .map((m) => m.content);
}

/** Mem0's memories of Alice under `agentId`. */
const ofAgent = (agentId: string) =>
  mem0!.memories.filter((m) => m.user_id === alice && m.agent_id === agentId).map((m) => m.memory);

describe("memory providers per agent", () => {
  it("keeps each agent's exchanges and insights apart at Honcho and Mem0", async () => {
    const { h, say } = await start();
    await say("default", "My locker code is 4471");
    await say("family", "We plan a picnic with the kids on Sunday");
    await say("work", "The quarterly report is due Friday");
    await say("quiet", "I never want this remembered");

    await expect.poll(() => inWorkspace("herald"), { timeout: 15_000 }).toEqual(["My locker code is 4471"]);
    await expect
      .poll(() => inWorkspace("herald-family"), { timeout: 15_000 })
      .toEqual(["We plan a picnic with the kids on Sunday"]);
    // The family agent's own assistant peer, not modelled.
    expect(honcho!.peers("herald-family").get("herald-family")).toEqual({ observe_me: false });
    expect(honcho!.peers("herald-family").has("herald")).toBe(false);
    await expect.poll(() => ofAgent("herald"), { timeout: 15_000 }).toEqual(["My locker code is 4471"]);
    await expect
      .poll(() => ofAgent("herald-family"), { timeout: 15_000 })
      .toEqual(["We plan a picnic with the kids on Sunday"]);
    await expect
      .poll(() => ofAgent("herald-work"), { timeout: 15_000 })
      .toEqual(["The quarterly report is due Friday"]);
    // `work` uses Mem0 only; `quiet` no provider at all.
    expect(inWorkspace("herald-work")).toEqual([]);
    const everything = JSON.stringify([honcho!.requests, mem0!.requests]);
    expect(everything).not.toContain("never want this remembered");
    expect(everything).not.toContain("herald-quiet");

    // Each agent's note holds what Alice told it, never what she told another agent.
    await say("family", "what are we doing this weekend?");
    expect(note(h)).toContain("picnic");
    expect(note(h)).not.toContain("4471");
    expect(note(h)).not.toContain("quarterly");
    await say("default", "what do you know about me?");
    expect(note(h)).toContain("4471");
    expect(note(h)).not.toContain("picnic");
    await say("work", "anything due soon?");
    expect(note(h)).toContain("quarterly report");
    expect(note(h)).not.toMatch(/picnic|4471|From honcho/);
    await say("quiet", "do you know me?");
    expect(note(h)).toBe("");

    // The family agent's own question to the providers is answered from its records only.
    h.llm.script(
      { toolCalls: [{ name: "memory_provider_query", arguments: { query: "What is the locker code?" } }] },
      { text: "I do not know it." },
    );
    expect(await say("family", "what is my locker code?")).toBe("I do not know it.");
    const tool = h.llm.requests.at(-1)?.messages.find((m) => m.role === "tool");
    expect(String(tool?.content)).toContain("mem0:");
    expect(String(tool?.content)).not.toContain("4471");
  });

  it("sends an exchange that waited through an outage to its agent's records", async () => {
    const { h, say } = await start();
    honcho!.down();
    mem0!.down();
    await say("family", "Grandma visits on the 12th");
    const rows = () =>
      h.state.database.prepare("SELECT provider, exchange FROM memory_provider_backlog").all() as {
        provider: string;
        exchange: string;
      }[];
    await expect.poll(() => rows().length, { timeout: 10_000 }).toBe(2);
    for (const row of rows()) expect(JSON.parse(row.exchange)).toMatchObject({ agent: "family" });
    await h.restart();
    honcho!.up();
    mem0!.up();
    await expect
      .poll(() => inWorkspace("herald-family"), { timeout: 30_000 })
      .toEqual(["Grandma visits on the 12th"]);
    await expect
      .poll(() => ofAgent("herald-family"), { timeout: 30_000 })
      .toEqual(["Grandma visits on the 12th"]);
    expect(inWorkspace("herald")).toEqual([]);
    expect(ofAgent("herald")).toEqual([]);
  });
});
