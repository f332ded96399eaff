/**
 * Recall by meaning: `session_search` over the gateway's state with the background embedder against a
 * fake embeddings endpoint (keyword buckets: "trip" is near "flights booked"). What a user notices:
 * a message from long ago phrased differently is found, another user's is not, a crash mid-backlog
 * loses nothing, an outage leaves keyword search working, and without an endpoint nothing changes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { recallNote } from "../../agent/recall-note.js";
import {
  createRecall,
  type EmbeddingsConfig,
  type Recall,
  recallPrefetch,
  sessionSearchTool,
} from "../../agent/tools/session-search/index.js";
import type { ToolContext } from "../../agent/types.js";
import { silentLogger } from "../../core/logger.js";
import type { TurnJob } from "../../core/turn.js";
import type { ChatMessage } from "../../core/types.js";
import { DEFAULT_RESET_POLICY, type SearchOptions, SqliteState } from "../../sessions/index.js";
import { type FakeEmbeddings, startFakeEmbeddings } from "../fakes/embeddings/index.js";

const FILLER = [
  "can you convert 3 cups to millilitres",
  "what is the capital of Australia",
  "remind me how git rebase works",
  "summarise this article about tides",
  "how many days until the end of the month",
];

/** A runner stand-in with the two members recall uses: turn-finished events and /status lines. */
function fakeGateway() {
  type Finished = { type: "turn-finished" };
  const handlers: ((event: Finished) => void)[] = [];
  const lines: (() => string)[] = [];
  return {
    on: <T extends "turn-finished">(_type: T, handler: (event: Extract<Finished, { type: T }>) => void) => {
      handlers.push(handler as (event: Finished) => void);
      return () => {};
    },
    addStatusLine: (line: () => string) => lines.push(line),
    turnFinished: () => {
      for (const h of handlers) h({ type: "turn-finished" });
    },
    status: () => lines.map((l) => l()),
  };
}

function embeddings(
  fake: FakeEmbeddings,
  over: Partial<NonNullable<EmbeddingsConfig>> = {},
): EmbeddingsConfig {
  return {
    baseUrl: fake.url,
    model: "fake-embed",
    dimensions: 64,
    requestDimensions: false,
    batchSize: 16,
    minSimilarity: 0.3,
    timeoutMs: 5000,
    prefetch: [],
    prefetchChars: 1200,
    ...over,
  };
}

/** One user's conversation on telegram: `turns` exchanges, each a user message and a reply. */
function converse(state: SqliteState, userId: string, texts: string[], ended = true): string {
  const { session } = state.sessions.open(
    { chat: { platform: "telegram", chatId: userId }, chatType: "dm", userId },
    DEFAULT_RESET_POLICY,
  );
  for (const text of texts) {
    const messages: ChatMessage[] = [
      { role: "user", content: text },
      { role: "assistant", content: `Noted: ${text}.` },
    ];
    state.transaction(() => state.sessions.append(session.id, messages));
  }
  if (ended) state.sessions.reset(session.key, "manual");
  return session.id;
}

function toolContext(recall: Recall, userId: string, sessionId = "current"): ToolContext {
  return {
    signal: new AbortController().signal,
    origin: {
      sessionId,
      sessionKey: `telegram:dm:${userId}`,
      chat: { platform: "telegram", chatId: userId },
      chatType: "dm",
      userId,
    },
    state: { searchSessions: (query, options) => recall.search(query, options) },
    logger: silentLogger(),
    homeDir: "/nonexistent",
    progress: () => {},
  };
}

async function sessionSearch(recall: Recall, userId: string, query: string): Promise<string> {
  const out = await sessionSearchTool.execute(
    sessionSearchTool.parameters.parse({ query }),
    toolContext(recall, userId),
  );
  return typeof out === "string" ? out : out.content;
}

let dir: string;
let fake: FakeEmbeddings;
const open: { state?: SqliteState; recall?: Recall }[] = [];

function start(config: EmbeddingsConfig, file = join(dir, "state.db")) {
  const state = SqliteState.open(file);
  const gateway = fakeGateway();
  const recall = createRecall(
    { embeddings: config },
    { gateway, state, logger: silentLogger() },
    { baseBackoffMs: 20, wakeDelayMs: 5 },
  );
  open.push({ state, recall });
  return { state, recall, gateway };
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "herald-recall-"));
  fake = await startFakeEmbeddings();
});

afterEach(async () => {
  for (const { recall, state } of open.splice(0)) {
    await recall?.stop();
    state?.close();
  }
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("recall by meaning", () => {
  it("finds a message from 200 turns ago phrased differently, which keywords miss", async () => {
    const { state, recall, gateway } = start(embeddings(fake));
    converse(state, "111", ["flights booked for the 12th, hotel near the old town"]);
    for (let i = 0; i < 200; i++)
      converse(state, "111", [`${FILLER[i % FILLER.length]} (${i})`], i % 20 === 19);
    gateway.turnFinished();
    await recall.embedder!.drain();
    expect(recall.vectors!.pending()).toBe(0);

    const found = await sessionSearch(recall, "111", "what did we decide about the trip?");
    expect(found).toContain("flights booked for the 12th");
    // The same question by keywords alone misses it: no word of it but "the" is in that message.
    const keywords = state.sessions.search("what did we decide about the trip?", {
      userId: "111",
      limit: 20,
    });
    expect(keywords.map((h) => h.snippet).join("\n")).not.toContain("flights");
    expect(gateway.status()).toEqual(["Recall: keywords and meaning"]);
  });

  it("never recalls another user's similar message", async () => {
    const { state, recall } = start(embeddings(fake));
    converse(state, "222", ["our flights are booked, the hotel too"]);
    converse(state, "111", ["the pasta recipe needs more salt"]);
    await recall.embedder!.drain();
    expect(recall.vectors!.pending()).toBe(0);
    const answer = await sessionSearch(recall, "111", "trip plans");
    expect(answer).not.toContain("flights");
    expect(answer).toContain("No earlier conversations match");
    expect(await sessionSearch(recall, "222", "trip plans")).toContain("our flights are booked");
  });

  it("resumes the backlog after a crash mid-way, embedding each message once", async () => {
    const file = join(dir, "state.db");
    const first = start(embeddings(fake, { batchSize: 10 }), file);
    const texts = Array.from({ length: 60 }, (_, i) => `note ${i} about the garden plants`);
    converse(first.state, "111", texts);
    const all = first.recall.vectors!.pending();
    expect(all).toBe(120);
    // Two batches answer, then the endpoint hangs with the third in flight, and the process dies.
    fake.hangAfter(2);
    const run = first.recall.embedder!.drain();
    await expect.poll(() => fake.held(), { timeout: 5000 }).toBe(1);
    const answered = all - first.recall.vectors!.pending();
    expect(answered).toBe(20);
    first.state.close();
    fake.release();
    await run;

    const before = fake.embeddedTexts().length;
    const second = start(embeddings(fake, { batchSize: 10 }), file);
    expect(second.recall.vectors!.pending()).toBe(all - answered);
    await second.recall.embedder!.drain();
    expect(second.recall.vectors!.pending()).toBe(0);
    // Only what was not stored before the crash went to the endpoint again.
    expect(fake.embeddedTexts().length - before).toBe(all - answered);
    expect(await sessionSearch(second.recall, "111", "tomatoes and seeds")).toContain(
      "about the garden plants",
    );
  });

  it("keeps keyword search working through an outage and catches up after it", async () => {
    const { state, recall, gateway } = start(embeddings(fake));
    converse(state, "111", ["flights booked for the 12th"]);
    fake.failNext(1000, 503);
    await recall.embedder!.drain();
    expect(recall.embedder!.failing).toBe(true);
    expect(gateway.status()[0]).toContain("keywords only for now");
    // While it is down the query cannot be embedded either: keywords still answer, meaning waits.
    expect(await sessionSearch(recall, "111", "flights")).toContain("flights booked for the 12th");
    expect(await sessionSearch(recall, "111", "our trip")).toContain("No earlier conversations match");
    // The retries (backoff from 20 ms, doubling) reach the endpoint once it answers again.
    fake.failNext(0);
    await expect.poll(() => recall.vectors!.pending(), { timeout: 5000 }).toBe(0);
    expect(recall.embedder!.failing).toBe(false);
    expect(await sessionSearch(recall, "111", "our trip")).toContain("flights booked for the 12th");
  });

  it("drops a message the endpoint refuses after its tries, and embeds the rest", async () => {
    const { state, recall } = start(embeddings(fake));
    fake.refuseTextsWith("POISON");
    converse(state, "111", ["POISON pill text", "the dentist appointment is on Friday"]);
    const settled = async () => {
      await recall.embedder!.drain();
      return recall.vectors!.pending();
    };
    await expect.poll(settled, { timeout: 10_000 }).toBe(0);
    expect(await sessionSearch(recall, "111", "see the doctor")).toContain("dentist appointment");
  });

  it("embeds everything again when the model changes", async () => {
    const file = join(dir, "state.db");
    const first = start(embeddings(fake), file);
    converse(first.state, "111", ["flights booked for the 12th"]);
    await first.recall.embedder!.drain();
    expect(first.recall.vectors!.pending()).toBe(0);
    await first.recall.stop();
    first.state.close();
    const second = start(embeddings(fake, { model: "fake-embed-2" }), file);
    expect(second.recall.vectors!.pending()).toBe(2);
    await second.recall.embedder!.drain();
    expect(fake.requests.at(-1)?.model).toBe("fake-embed-2");
    expect(await sessionSearch(second.recall, "111", "the trip")).toContain("flights booked");
  });

  it("without an endpoint finds by keywords only and keeps no vectors", async () => {
    const { state, recall } = start(undefined);
    converse(state, "111", ["flights booked for the 12th"]);
    expect(recall.embedder).toBeUndefined();
    expect(await sessionSearch(recall, "111", "flights")).toContain("flights booked for the 12th");
    expect(await sessionSearch(recall, "111", "trip plans")).toContain("No earlier conversations match");
    const tables = state.database.prepare("SELECT name FROM sqlite_master WHERE name LIKE '%vector%'").all();
    expect(tables).toEqual([]);
    expect(fake.requests).toEqual([]);
  });

  it("names the session's title beside its dated matches", async () => {
    const { state, recall } = start(embeddings(fake));
    const id = converse(state, "111", ["flights booked for the 12th"]);
    state.sessions.setTitle(id, "Lisbon in May");
    await recall.embedder!.drain();
    const answer = await sessionSearch(recall, "111", "trip");
    expect(answer).toMatch(
      /Conversation "Lisbon in May" \(.+\):\n {2}\d{4}-\d\d-\d\d \d\d:\d\d UTC user: flights booked/,
    );
  });
});

describe("recall prefetch", () => {
  const on = (prefetch: string[]): EmbeddingsConfig => ({
    ...embeddings({ url: "http://127.0.0.1:1/v1" } as FakeEmbeddings)!,
    prefetch,
  });

  it("marks a turn only where it is on and when the message refers to the past", () => {
    const asked = "what did we decide about the trip?";
    expect(recallPrefetch(on(["telegram"]), "telegram", asked)).toEqual({ maxChars: 1200 });
    expect(recallPrefetch(on(["all"]), "discord", "do you remember the hotel?")).toEqual({ maxChars: 1200 });
    expect(recallPrefetch(on(["telegram"]), "discord", asked)).toBeUndefined();
    expect(recallPrefetch(on([]), "telegram", asked)).toBeUndefined();
    expect(recallPrefetch(undefined, "telegram", asked)).toBeUndefined();
    expect(recallPrefetch(on(["all"]), "telegram", "how warm is Lisbon in May?")).toBeUndefined();
  });

  it("finds by meaning only, and a search that fails leaves the turn without a note", async () => {
    const { state, recall } = start(embeddings(fake));
    converse(state, "111", ["flights booked for the 12th", "the weather is nice today"]);
    await recall.embedder!.drain();
    const job = (text: string) =>
      ({
        kind: "turn",
        turnId: "t1",
        origin: toolContext(recall, "111").origin,
        history: [],
        input: { text },
        systemPrompt: "",
        toolsets: [],
        recall: { maxChars: 400 },
        createdAt: Date.now(),
      }) satisfies TurnJob;
    const client = { searchSessions: (q: string, o?: SearchOptions) => recall.search(q, o) };
    const note = await recallNote(job("did we settle the trip?"), client, silentLogger());
    expect(note).toContain("flights booked for the 12th");
    expect(note).not.toContain("weather");
    const failing = { searchSessions: () => Promise.reject(new Error("state API down")) };
    expect(await recallNote(job("did we settle the trip?"), failing, silentLogger())).toBeUndefined();
  });
});
