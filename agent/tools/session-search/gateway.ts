/**
 * `session_search` on the gateway: the search behind the StateClient's `searchSessions` (for the
 * embedded agent and, over the state API, for workers elsewhere). With an `embeddings:` endpoint it is
 * hybrid: the keyword matches (FTS5, bm25) and the meaning matches (the query's vector against the
 * stored message vectors) fused by reciprocal rank, both within the caller's scope; the background
 * embedder is woken after each committed turn. Without an endpoint, or while it fails, keywords only.
 */
import { describeError } from "../../../core/errors.js";
import type { Logger } from "../../../core/logger.js";
import type { GatewayEvents } from "../../../core/turn.js";
import {
  type SearchHit,
  type SearchOptions,
  SqliteMessageVectors,
  type SqliteState,
} from "../../../sessions/index.js";
import { BackgroundEmbedder, type EmbedderOptions } from "./embedder.js";
import { createEmbeddingsClient, type EmbeddingsClient } from "./embeddings-client.js";
import type { EmbeddingsConfig } from "./settings.js";

/** What recall needs of the runner (`GatewayRunner` has this shape). */
export type RecallGateway = GatewayEvents<{ type: "turn-finished" }> & {
  addStatusLine(line: () => string): unknown;
};

/** The gateway side of `session_search`. */
export interface Recall {
  /** `StateClient.searchSessions`: hybrid with an endpoint, keywords otherwise. Never rejects on an outage. */
  search(query: string, options?: SearchOptions): Promise<SearchHit[]>;
  /** The background embedder (undefined without an endpoint). */
  readonly embedder: BackgroundEmbedder | undefined;
  /** The vector store (undefined without an endpoint). */
  readonly vectors: SqliteMessageVectors | undefined;
  stop(): Promise<void>;
}

/** The rank constant of reciprocal rank fusion (the usual 60: a hit's place counts, its score does not). */
const RRF_K = 60;

/**
 * Fuses ranked lists by reciprocal rank: each hit scores the sum of 1/(k + rank) over the lists it is
 * in; the first list's snippet wins for a hit in several (keyword snippets mark the matched words).
 */
export function fuseByRank(lists: readonly (readonly SearchHit[])[], limit: number): SearchHit[] {
  const scored = new Map<string, { hit: SearchHit; score: number }>();
  for (const list of lists) {
    list.forEach((hit, rank) => {
      const key = `${hit.sessionId}\u0000${hit.seq}`;
      const entry = scored.get(key);
      const score = 1 / (RRF_K + rank + 1);
      if (entry) entry.score += score;
      else scored.set(key, { hit, score });
    });
  }
  return [...scored.values()]
    .sort((a, b) => b.score - a.score || b.hit.createdAt - a.hit.createdAt)
    .slice(0, limit)
    .map((e) => e.hit);
}

/** Words that say a message refers to earlier conversations (English). */
const PAST =
  /\b(remember|recall|last time|earlier|previously|before|the other day|yesterday|last (week|month|year|night)|we (talked|discussed|decided|said|agreed|planned)|did (we|i|you)|you (said|told|mentioned|suggested)|i (said|told|mentioned|asked))\b/i;

/** Whether `text` seems to refer to earlier conversations ("what did we decide about the trip?"). */
export function refersToPast(text: string): boolean {
  return PAST.test(text);
}

/**
 * `TurnJob.recall` for a turn: set when an embeddings endpoint is configured, prefetch is on for the
 * turn's platform (`embeddings.prefetch`: platform names, or `all`) and its text seems to refer to the
 * past.
 */
export function recallPrefetch(
  settings: EmbeddingsConfig,
  platform: string,
  text: string,
): { maxChars: number } | undefined {
  if (!settings || settings.prefetch.length === 0) return undefined;
  if (!settings.prefetch.includes("all") && !settings.prefetch.includes(platform)) return undefined;
  return refersToPast(text) ? { maxChars: settings.prefetchChars } : undefined;
}

/** Builds recall on the gateway's state; with an endpoint it starts the embedder (and the index load). */
export function createRecall(
  config: { embeddings: EmbeddingsConfig },
  ports: {
    gateway: RecallGateway;
    state: Pick<SqliteState, "database" | "transaction" | "sessions" | "isOpen">;
    logger: Logger;
  },
  options: EmbedderOptions & { client?: EmbeddingsClient } = {},
): Recall {
  const { state } = ports;
  const settings = config.embeddings;
  const titled = (hits: SearchHit[]) => withTitles(hits, (id) => state.sessions.get(id)?.title);
  if (!settings) {
    return {
      search: async (query, opts) => (opts?.meaningOnly ? [] : titled(state.sessions.search(query, opts))),
      embedder: undefined,
      vectors: undefined,
      stop: async () => {},
    };
  }
  const logger = ports.logger.child({ component: "recall" });
  const vectors = new SqliteMessageVectors(state.database, settings);
  const client = options.client ?? createEmbeddingsClient(settings);
  const embedder = new BackgroundEmbedder(
    vectors,
    client,
    { state, logger },
    { batchSize: settings.batchSize, ...options },
  );
  ports.gateway.on("turn-finished", () => embedder.wake());
  ports.gateway.addStatusLine(() => statusLine(vectors.pending(), embedder.failing));
  vectors.load().then(
    () => embedder.wake(),
    (err: unknown) => logger.error({ err: describeError(err) }, "loading the message vectors failed"),
  );
  let queryFailing = false;

  const search = async (query: string, opts: SearchOptions = {}): Promise<SearchHit[]> => {
    const limit = opts.limit ?? 10;
    const pool = { ...opts, limit: Math.max(limit * 3, 20) };
    try {
      const [vector] = await client.embed([query], AbortSignal.timeout(settings.timeoutMs));
      await vectors.load();
      const meaning = vectors.search(vector!, { ...pool, minSimilarity: settings.minSimilarity });
      // Every word must match: meaning finds what the words miss.
      const keywords = opts.meaningOnly ? [] : state.sessions.search(query, { ...pool, allTerms: true });
      if (queryFailing) logger.info("embeddings endpoint answers searches again");
      queryFailing = false;
      return titled(fuseByRank([keywords, meaning], limit));
    } catch (err) {
      if (!queryFailing)
        logger.warn({ err: describeError(err) }, "session search by meaning failed; keywords only");
      queryFailing = true;
      return opts.meaningOnly ? [] : titled(state.sessions.search(query, { ...opts, limit }));
    }
  };
  return { search, embedder, vectors, stop: () => embedder.stop() };
}

function statusLine(pending: number, failing: boolean): string {
  if (failing)
    return `Recall: keywords only for now (the embeddings endpoint is failing; ${pending} messages wait)`;
  return `Recall: keywords and meaning${pending > 0 ? ` (${pending} messages wait to be embedded)` : ""}`;
}

function withTitles(hits: SearchHit[], titleOf: (sessionId: string) => string | undefined): SearchHit[] {
  const titles = new Map<string, string | undefined>();
  return hits.map((hit) => {
    if (!titles.has(hit.sessionId)) titles.set(hit.sessionId, titleOf(hit.sessionId));
    const title = titles.get(hit.sessionId);
    return title ? { ...hit, sessionTitle: title } : hit;
  });
}
