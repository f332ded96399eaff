/**
 * `session_search`: search over the caller's own past conversations, by keywords (FTS5) and, with an
 * `embeddings:` endpoint, by meaning (`gateway.ts`). Scoped to the same user on the same platform, the
 * current session left out; a chat never sees another user's sessions.
 */
import { z } from "zod";
import { searchKeyPrefix } from "../../../core/chat.js";
import type { SearchHit } from "../../../sessions/types.js";
import { defineTool } from "../../tool-registry.js";

export { BackgroundEmbedder, type EmbedderOptions, type EmbedderState } from "./embedder.js";
export {
  createEmbeddingsClient,
  type EmbeddingsClient,
  type EmbeddingsEndpoint,
} from "./embeddings-client.js";
export {
  createRecall,
  fuseByRank,
  type Recall,
  type RecallGateway,
  recallPrefetch,
  refersToPast,
} from "./gateway.js";
export { type EmbeddingsConfig, embeddingsSettings } from "./settings.js";

const parameters = z.object({
  query: z
    .string()
    .trim()
    .min(1)
    .describe("What to look for in earlier conversations: keywords, or what it was about in your own words."),
  limit: z.number().int().min(1).max(20).optional().describe("Most results to return (default 8)."),
});

/** The `session_search` tool (toolset "core"). */
export const sessionSearchTool = defineTool({
  name: "session_search",
  description:
    "Search the user's earlier conversations with you (not the current one), by keywords and, where configured, by meaning. Use it when the user refers to something discussed before.",
  parameters,
  toolset: "core",
  async execute({ query, limit = 8 }, ctx) {
    const { origin } = ctx;
    const keyPrefix = searchKeyPrefix(origin);
    ctx.progress(`searching past conversations for "${query}"`);
    const hits = await ctx.state.searchSessions(query, {
      limit,
      keyPrefix,
      userId: origin.userId,
      excludeSessionId: origin.sessionId,
    });
    // The state client filters already; this guards a client that ignored an option.
    const own = hits.filter((h) => h.sessionId !== origin.sessionId && h.sessionKey.startsWith(keyPrefix));
    if (own.length === 0) return `No earlier conversations match "${query}".`;
    return formatHits(own.slice(0, limit));
  },
});

/** Hits grouped by session, newest session first, one dated line each. */
export function formatHits(hits: SearchHit[]): string {
  const bySession = new Map<string, SearchHit[]>();
  for (const hit of hits) {
    const list = bySession.get(hit.sessionId) ?? [];
    list.push(hit);
    bySession.set(hit.sessionId, list);
  }
  const sessions = [...bySession.values()].sort(
    (a, b) => Math.max(...b.map((h) => h.createdAt)) - Math.max(...a.map((h) => h.createdAt)),
  );
  const blocks = sessions.map((list) => {
    const lines = list
      .sort((a, b) => a.seq - b.seq)
      .map((h) => `  ${formatDate(h.createdAt)} ${h.role}: ${h.snippet.replace(/\s+/g, " ").trim()}`);
    const title = list.find((h) => h.sessionTitle)?.sessionTitle;
    return `Conversation ${title ? `"${title.slice(0, 80)}" (${list[0]!.sessionId})` : list[0]!.sessionId}:\n${lines.join("\n")}`;
  });
  return `${hits.length} match${hits.length === 1 ? "" : "es"} in ${sessions.length} earlier conversation${sessions.length === 1 ? "" : "s"}:\n${blocks.join("\n")}`;
}

/** `2024-05-01 14:03 UTC` (the tool has no user time zone; UTC is stated so it is not misread). */
function formatDate(epochMs: number): string {
  return `${new Date(epochMs).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}
