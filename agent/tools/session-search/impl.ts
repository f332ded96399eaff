/** What `session_search` does (`declaration.ts` declares it). */
import { searchKeyPrefix } from "../../../core/chat.js";
import type { SearchHit } from "../../../sessions/types.js";
import type { ToolRun } from "../../tool-declaration.js";
import type { sessionSearchParameters } from "./declaration.js";

/** Runs one `session_search` call. */
export const runSessionSearch: ToolRun<typeof sessionSearchParameters> = async (
  { query, limit = 8 },
  ctx,
) => {
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
};

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
