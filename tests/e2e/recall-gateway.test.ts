/**
 * Recall by meaning through the whole gateway: turns commit, the background embedder (woken after each)
 * embeds them against a fake embeddings endpoint, and a later `session_search` by the model finds the
 * user's earlier message said in other words, and never another user's.
 */
import { afterEach, describe, expect, it } from "vitest";
import { FakeChatAdapter } from "../fakes/chat/index.js";
import { type FakeEmbeddings, startFakeEmbeddings } from "../fakes/embeddings/index.js";
import { type Harness, startHarness } from "../helpers/gateway-harness.js";

let harness: Harness | undefined;
let fake: FakeEmbeddings | undefined;

afterEach(async () => {
  await harness?.stop();
  await fake?.close();
  harness = fake = undefined;
});

/** Messages not embedded yet (queued, or above the embedder's mark). */
function waiting(h: Harness): number {
  const row = h.state.database
    .prepare(
      `SELECT (SELECT count(*) FROM embedding_backlog) + (SELECT count(*) FROM messages
         WHERE id > (SELECT queued_upto FROM embedding_state) AND role IN ('user', 'assistant')) AS n`,
    )
    .get() as { n: number };
  return row.n;
}

const bob = { chat: { platform: "fakechat", chatId: "dm-bob" }, sender: { id: "bob", name: "Bob" } };

/** A gateway with the fake chat and the fake embeddings endpoint; `say` waits for each reply. */
async function start(env: Record<string, string> = {}) {
  fake = await startFakeEmbeddings();
  let chat!: FakeChatAdapter;
  const h = await startHarness({
    env: {
      GATEWAY_ALLOWED_USERS: "fakechat:alice,fakechat:bob",
      HERALD_EMBEDDINGS_URL: fake.url,
      HERALD_EMBEDDINGS_MODEL: "fake-embed",
      HERALD_EMBEDDINGS_DIMENSIONS: "64",
      ...env,
    },
    adapters: () => {
      chat = new FakeChatAdapter();
      return [chat];
    },
  });
  harness = h;
  let replies = 0;
  const say = async (text: string, who: Partial<typeof bob> = {}) => {
    await chat.inject({ text, ...who });
    await chat.waitForTexts(++replies);
  };
  /** Alice booked flights, then talked of other things; Bob booked his own. Then Alice starts anew. */
  const history = async () => {
    await say("our flights are booked for the 3rd", bob);
    await say("flights booked for the 12th, the hotel is by the river");
    for (let i = 0; i < 10; i++) await say(`how do I convert ${i} cups to millilitres`);
    await say("/new");
    await expect.poll(() => waiting(h), { timeout: 10_000 }).toBe(0);
  };
  return { h, say, history, chat: () => chat };
}

/** The system notes of the model's last request (after the first system prompt). */
function notes(h: Harness): string[] {
  const messages = h.llm.requests.at(-1)?.messages ?? [];
  return messages
    .slice(1)
    .filter((m) => m.role === "system")
    .map((m) => String(m.content));
}

describe("recall by meaning in the gateway", () => {
  it("finds what the user said turns ago in other words, and not what another user said", async () => {
    const { h, say, history, chat } = await start();
    await history();
    h.llm.script(
      { toolCalls: [{ name: "session_search", arguments: { query: "what did we decide about the trip" } }] },
      { text: "You booked flights for the 12th." },
    );
    await say("what did we decide about the trip?");
    const toolResult = h.llm.requests
      .at(-1)
      ?.messages.find((m) => m.role === "tool")
      ?.content?.toString();
    expect(toolResult).toContain("flights booked for the 12th");
    expect(toolResult).not.toContain("3rd");
    expect(chat().texts().at(-1)).toBe("You booked flights for the 12th.");
    // Prefetch is off unless configured: the model got no note.
    expect(notes(h)).toEqual([]);
    await say("/status");
    expect(chat().texts().at(-1)).toContain("Recall: keywords and meaning");
  });

  it("prefetches the earlier message into the turn when the user refers to the past", async () => {
    const { h, say, history } = await start({ HERALD_RECALL_PREFETCH: "fakechat" });
    await history();
    await say("do you remember what we decided about the trip?");
    const [note] = notes(h);
    expect(note).toMatch(/^\[From earlier conversations with this user/);
    expect(note).toContain("flights booked for the 12th");
    expect(note).not.toContain("3rd");
    // The note sits after the stable prefix, right before the user's message, and is not stored.
    const messages = h.llm.requests.at(-1)!.messages;
    expect(messages.at(-2)?.role).toBe("system");
    expect(messages.at(-1)?.content).toBe("do you remember what we decided about the trip?");
    const stored = h.state.database
      .prepare("SELECT count(*) AS n FROM messages WHERE content LIKE '[From earlier%'")
      .get() as { n: number };
    expect(stored.n).toBe(0);
    // A message that does not refer to the past gets no note.
    await say("how warm is it in Lisbon in May?");
    expect(notes(h)).toEqual([]);
  });
});
