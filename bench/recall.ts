/**
 * Recall scenario (`npm run bench -- recall`):
 * - backlog throughput: a state file of messages nobody embedded yet, drained by the background
 *   embedder against the fake embeddings endpoint on loopback (and against an in-process client that
 *   answers at once, Herald's own cost alone);
 * - search at scale: state files of 100,000 and 1,000,000 messages, every one with a 256-dimension
 *   vector, one user owning them all (nothing is filtered out of the scan: the worst case); the p50 of
 *   the meaning stage alone (sign-bit scan in memory + exact cosine of the pool from SQLite), of the
 *   keyword stage (FTS5), and of the whole hybrid search including the query's embedding over loopback;
 * - the turn path with recall on and off: `herald gateway` as a child process, sequential turns over
 *   the API, alternating rounds, the turn's round trip and the gateway's CPU per turn (with recall on
 *   that CPU includes embedding each turn's messages in the background).
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import {
  BackgroundEmbedder,
  createEmbeddingsClient,
  createRecall,
  type EmbeddingsClient,
} from "../agent/tools/session-search/index.js";
import { silentLogger } from "../core/logger.js";
import { SqliteMessageVectors, SqliteState } from "../sessions/index.js";
import { bucketVector, startFakeEmbeddings, TOPICS } from "../tests/fakes/embeddings/index.js";
import { startFakeLlm } from "../tests/fakes/llm/index.js";
import { cpuSeconds, machineLine, median, postTurn, round, spawnGateway } from "./lib.js";

export interface RecallBenchOptions {
  root: string;
  dimensions: number;
  backlogMessages: number;
  /** Message counts of the search files. */
  scales: number[];
  messagesPerSession: number;
  searches: number;
  turnsPerRound: number;
  rounds: number;
}

export interface ScaleFigure {
  messages: number;
  generateSeconds: number;
  stateFileMb: number;
  indexLoadMs: number;
  meaningP50Ms: number;
  keywordP50Ms: number;
  hybridP50Ms: number;
  /** CPU time of this process per search (p50): what an idle core would take. */
  meaningCpuP50Ms: number;
  keywordCpuP50Ms: number;
  hybridCpuP50Ms: number;
}

export interface RecallBenchResult {
  backlogPerSecondFake: number;
  backlogPerSecondInstant: number;
  scales: ScaleFigure[];
  turns: TurnFigures;
  embeddedDuringTurns: number;
  /** The host's 1-minute load average at the end (the machine is shared). */
  loadAverage: number;
}

const WORDS = [
  ...Object.values(TOPICS).flat(),
  ...Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}`),
];

function text(i: number): string {
  let seed = (i * 2654435761) >>> 0;
  const words: string[] = [];
  for (let k = 0; k < 12; k++) {
    seed = (Math.imul(seed ^ (seed >>> 15), 2246822507) + k) >>> 0;
    words.push(WORDS[seed % WORDS.length]!);
  }
  return words.join(" ");
}

function unit(values: number[]): Float32Array {
  const v = Float32Array.from(values);
  const norm = Math.hypot(...v);
  for (let k = 0; k < v.length; k++) v[k] = (v[k] ?? 0) / norm;
  return v;
}

/** A state file of `messages` messages in sessions of one user (FTS index built in bulk). */
function generate(file: string, messages: number, perSession: number): SqliteState {
  const state = SqliteState.open(file);
  const db = state.database;
  const insertSession = db.prepare(
    `INSERT INTO sessions (id, key, platform, chat_id, chat_type, user_id, created_at, last_active_at, ended_at, message_count)
     VALUES (?, ?, 'telegram', '111', 'dm', '111', ?, ?, ?, ?)`,
  );
  const insertMessage = db.prepare(
    "INSERT INTO messages (session_id, seq, role, content, created_at) VALUES (?, ?, ?, ?, ?)",
  );
  const start = Date.now() - messages * 60_000;
  db.transaction(() => {
    for (let s = 0; s * perSession < messages; s++) {
      const id = `s${s}`;
      const at = start + s * perSession * 60_000;
      insertSession.run(
        id,
        `telegram:dm:111#${s}`,
        at,
        at + perSession * 60_000,
        at + perSession * 60_000,
        perSession,
      );
      for (let k = 0; k < perSession && s * perSession + k < messages; k++) {
        const i = s * perSession + k;
        insertMessage.run(id, k + 1, k % 2 === 0 ? "user" : "assistant", text(i), at + k * 60_000);
      }
    }
  })();
  while (state.sessions.indexForSearch() > 0);
  return state;
}

async function scale(messages: number, opts: RecallBenchOptions, fakeUrl: string): Promise<ScaleFigure> {
  const dir = mkdtempSync(join(tmpdir(), "herald-bench-recall-"));
  try {
    const started = performance.now();
    const state = generate(join(dir, "state.db"), messages, opts.messagesPerSession);
    const settings = { model: "fake-embed", dimensions: opts.dimensions };
    const writer = new SqliteMessageVectors(state.database, settings);
    const chunk = state.database.prepare<[number], { id: number; sessionId: string; content: string }>(
      "SELECT id, session_id AS sessionId, content FROM messages WHERE id > ? ORDER BY id LIMIT 10000",
    );
    for (let after = 0; ; ) {
      const rows = chunk.all(after);
      if (rows.length === 0) break;
      const batch = rows.map((row) => ({
        messageId: row.id,
        sessionId: row.sessionId,
        vector: unit(bucketVector(row.content, opts.dimensions)),
      }));
      state.transaction(() => writer.store(batch));
      after = rows.at(-1)!.id;
    }
    state.database.exec("UPDATE embedding_state SET queued_upto = (SELECT MAX(id) FROM messages)");
    const generateSeconds = (performance.now() - started) / 1000;
    const gateway = { on: () => () => {}, addStatusLine: () => {} };
    const recall = createRecall(
      {
        embeddings: {
          ...settings,
          baseUrl: fakeUrl,
          requestDimensions: true,
          batchSize: 64,
          minSimilarity: 0.2,
          timeoutMs: 30_000,
          prefetch: [],
          prefetchChars: 1200,
        },
      },
      { gateway, state, logger: silentLogger() },
    );
    const loadStart = performance.now();
    await recall.vectors!.load();
    const indexLoadMs = performance.now() - loadStart;
    const scope = { userId: "111", keyPrefix: "telegram:", excludeSessionId: "none", limit: 8 };
    const queries = Object.keys(TOPICS).map(
      (topic, i) => `what did we say about the ${topic} ${WORDS[i * 7]}`,
    );
    const wall = { meaning: [] as number[], keyword: [] as number[], hybrid: [] as number[] };
    const cpu = { meaning: [] as number[], keyword: [] as number[], hybrid: [] as number[] };
    const measure = async (name: keyof typeof wall, warm: boolean, work: () => unknown) => {
      const cpuStart = process.cpuUsage();
      const started = performance.now();
      await work();
      const used = process.cpuUsage(cpuStart);
      if (warm) return;
      wall[name].push(performance.now() - started);
      cpu[name].push((used.user + used.system) / 1000);
    };
    for (let i = 0; i < opts.searches + 3; i++) {
      const query = queries[i % queries.length]!;
      const vector = unit(bucketVector(query, opts.dimensions));
      const warm = i < 3;
      await measure("meaning", warm, () =>
        recall.vectors!.search(vector, { ...scope, limit: 24, minSimilarity: 0.2 }),
      );
      await measure("keyword", warm, () => state.sessions.search(query, { ...scope, limit: 24 }));
      await measure("hybrid", warm, () => recall.search(query, scope));
    }
    await recall.stop();
    const stateFileMb = statSync(join(dir, "state.db")).size / 1024 / 1024;
    state.close();
    return {
      messages,
      generateSeconds: round(generateSeconds, 1),
      stateFileMb: Math.round(stateFileMb),
      indexLoadMs: Math.round(indexLoadMs),
      meaningP50Ms: round(median(wall.meaning)),
      keywordP50Ms: round(median(wall.keyword)),
      hybridP50Ms: round(median(wall.hybrid)),
      meaningCpuP50Ms: round(median(cpu.meaning)),
      keywordCpuP50Ms: round(median(cpu.keyword)),
      hybridCpuP50Ms: round(median(cpu.hybrid)),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Messages per second the embedder drains through `client`. */
async function backlog(opts: RecallBenchOptions, client: EmbeddingsClient): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "herald-bench-backlog-"));
  try {
    const state = generate(join(dir, "state.db"), opts.backlogMessages, opts.messagesPerSession);
    const vectors = new SqliteMessageVectors(state.database, {
      model: "fake-embed",
      dimensions: opts.dimensions,
    });
    const embedder = new BackgroundEmbedder(
      vectors,
      client,
      { state, logger: silentLogger() },
      { batchSize: 64 },
    );
    const started = performance.now();
    await embedder.drain();
    const seconds = (performance.now() - started) / 1000;
    if (vectors.pending() !== 0) throw new Error(`the backlog did not drain: ${vectors.pending()} left`);
    state.close();
    return Math.round(opts.backlogMessages / seconds);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The three gateways of the turn-path comparison. */
const VARIANTS = ["off", "embedder", "prefetch"] as const;
type Variant = (typeof VARIANTS)[number];

/** Turn p50 and the gateway's CPU per turn (medians of the rounds), by variant. */
export type TurnFigures = Record<Variant, { turnP50Ms: number; cpuMsPerTurn: number }>;

async function turnPath(opts: RecallBenchOptions, fakeUrl: string): Promise<TurnFigures> {
  const llm = await startFakeLlm({ keepRequests: false });
  const common = { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "bench", HERALD_MODEL: "fake-model" };
  const embeddings = {
    HERALD_EMBEDDINGS_URL: fakeUrl,
    HERALD_EMBEDDINGS_MODEL: "fake-embed",
    HERALD_EMBEDDINGS_DIMENSIONS: String(opts.dimensions),
  };
  const gateways = {
    off: await spawnGateway(common, opts.root),
    embedder: await spawnGateway({ ...common, ...embeddings }, opts.root),
    prefetch: await spawnGateway({ ...common, ...embeddings, HERALD_RECALL_PREFETCH: "api" }, opts.root),
  };
  const latency = { off: [] as number[], embedder: [] as number[], prefetch: [] as number[] };
  const cpu = { off: [] as number[], embedder: [] as number[], prefetch: [] as number[] };
  try {
    for (let r = 0; r < opts.rounds * VARIANTS.length; r++) {
      const which = VARIANTS[r % VARIANTS.length]!;
      const gw = gateways[which];
      const latencies: number[] = [];
      const cpuBefore = cpuSeconds(gw.child.pid!);
      for (let t = 0; t < opts.turnsPerRound; t++) {
        const started = performance.now();
        // Every message refers to the past, so with prefetch on every turn searches first.
        await postTurn(
          gw.url,
          `do you remember what we decided about the trip? (${r}.${t})`,
          `bench-${t % 10}`,
        );
        latencies.push(performance.now() - started);
      }
      // Let the embedder finish this round's messages, so their cost lands in this round.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      latency[which].push(median(latencies));
      cpu[which].push(((cpuSeconds(gw.child.pid!) - cpuBefore) * 1000) / opts.turnsPerRound);
    }
  } finally {
    for (const gw of Object.values(gateways)) await gw.stop();
    await llm.close();
  }
  const figures = (v: Variant) => ({
    turnP50Ms: round(median(latency[v])),
    cpuMsPerTurn: round(median(cpu[v])),
  });
  return { off: figures("off"), embedder: figures("embedder"), prefetch: figures("prefetch") };
}

/** Runs the three parts. */
export async function benchRecall(opts: RecallBenchOptions): Promise<RecallBenchResult> {
  const fake = await startFakeEmbeddings({ dimensions: opts.dimensions });
  try {
    const instant: EmbeddingsClient = {
      embed: async (texts) => texts.map((t) => unit(bucketVector(t, opts.dimensions))),
    };
    const backlogPerSecondInstant = await backlog(opts, instant);
    const overHttp = createEmbeddingsClient({
      baseUrl: fake.url,
      model: "fake-embed",
      dimensions: opts.dimensions,
    });
    const backlogPerSecondFake = await backlog(opts, overHttp);
    const scales: ScaleFigure[] = [];
    for (const messages of opts.scales) scales.push(await scale(messages, opts, fake.url));
    const before = fake.embeddedTexts().length;
    const turns = await turnPath(opts, fake.url);
    return {
      backlogPerSecondFake,
      backlogPerSecondInstant,
      scales,
      turns,
      embeddedDuringTurns: fake.embeddedTexts().length - before,
      loadAverage: round(loadavg()[0] ?? 0, 1),
    };
  } finally {
    await fake.close();
  }
}

/** BENCHMARKS.md's recall section. */
export function recallMarkdown(r: RecallBenchResult, opts: RecallBenchOptions, command: string): string {
  const rows = r.scales
    .map(
      (s) =>
        `| ${s.messages.toLocaleString("en")} | ${s.generateSeconds} s, ${s.stateFileMb} MB | ${s.indexLoadMs} | ${s.meaningP50Ms} (${s.meaningCpuP50Ms}) | ${s.keywordP50Ms} (${s.keywordCpuP50Ms}) | ${s.hybridP50Ms} (${s.hybridCpuP50Ms}) |`,
    )
    .join("\n");
  return `## Recall by meaning

\`${command}\` on ${machineLine()}. Vectors of ${opts.dimensions} dimensions from the fake embeddings endpoint (keyword buckets, tests/fakes/embeddings), on loopback.

**Backlog:** ${opts.backlogMessages.toLocaleString("en")} messages nobody embedded, drained by the background embedder in batches of 64: **${r.backlogPerSecondFake.toLocaleString("en")} messages/s** against the fake endpoint over HTTP (the fake runs in the same process), **${r.backlogPerSecondInstant.toLocaleString("en")} messages/s** against a client that answers at once (Herald's own cost: backlog fill, SQL, sign bits, storage). A real endpoint's speed decides in practice.

**Search:** one user owns every message (the scan filters nothing out: the worst case), ${opts.messagesPerSession} messages a session, ${opts.searches} searches after 3 warm-up ones, p50 in ms. *Meaning* is the vector stage alone (sign bits of every vector scanned in memory, the nearest 200 ranked exactly by cosine from SQLite); *keywords* is the keyword-only search (FTS5, bm25, falling back to any word when no message has them all: \`session_search\` without an endpoint); *hybrid* is \`session_search\`'s whole search with one: the query's embedding over loopback, the meaning stage, keywords that must all match, reciprocal rank fusion and session titles.

Each cell is the wall-clock p50 with, in brackets, the p50 of the CPU time the search used (what one idle core would take; the machine is shared, load average ${r.loadAverage} at the end). The hybrid's CPU includes the fake endpoint answering in the same process.

| messages | generated (vectors included), file | index load ms | meaning p50 | keywords p50 | hybrid p50 |
|---|---|---|---|---|---|
${rows}

Against the target of 50 ms for a hybrid search over a million messages: its CPU time, what it takes on a core of its own, is the bracketed figure of the last row; the wall-clock figure beside it is what this shared machine gave at the time. The index load is the gateway's start reading every stored vector's sign bits (in steps of 5,000 rows, between other work); a search that comes first waits for it. Why sign bits in memory and full vectors in SQLite rather than sqlite-vec: [design/recall.md](docs/design/recall.md#storage-measured-then-chosen).

**Turn path:** ${opts.rounds} rounds of ${opts.turnsPerRound} sequential API turns on each of three gateways in turn (same fake model), every message referring to the past ("do you remember what we decided about the trip?"): recall **off**; the background **embedder** only; the embedder and **prefetch** (\`HERALD_RECALL_PREFETCH=api\`: each turn embeds its message and searches before the model call).

| | turn p50 ms | gateway CPU per turn ms |
|---|---|---|
| off | ${r.turns.off.turnP50Ms} | ${r.turns.off.cpuMsPerTurn} |
| embedder | ${r.turns.embedder.turnP50Ms} | ${r.turns.embedder.cpuMsPerTurn} |
| embedder + prefetch | ${r.turns.prefetch.turnP50Ms} | ${r.turns.prefetch.cpuMsPerTurn} |

The embedder's CPU includes embedding each turn's two messages in the background (${r.embeddedDuringTurns.toLocaleString("en")} embedded during the rounds); it never runs inside a turn (woken after the commit, on a timer). Prefetch adds one embedding request and one search to the turns it marks.`;
}
