/**
 * Recall prefetch: when the gateway marked a turn (`TurnJob.recall`: its platform has prefetch on and
 * the message seems to refer to earlier conversations), the loop searches the user's earlier
 * conversations with the turn's own text before the first model call, and puts the best few matches in
 * a note before the user's message (after the stable prefix, so prompt caches stay warm). The search is
 * `StateClient.searchSessions` in `session_search`'s scope; a failed search costs the turn nothing but
 * the note.
 */
import { searchKeyPrefix } from "../core/chat.js";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { TurnJob } from "../core/turn.js";
import type { StateClient } from "./types.js";

/** Matches the note carries at most (each line cut at 300 characters, the whole at `maxChars`). */
const NOTE_HITS = 4;

/** The note's text, or undefined when the turn is not marked, nothing matched, or the search failed. */
export async function recallNote(job: TurnJob, state: StateClient, log: Logger): Promise<string | undefined> {
  if (!job.recall || !job.input.text.trim()) return undefined;
  const { origin } = job;
  const hits = await state
    .searchSessions(job.input.text.slice(0, 1000), {
      limit: NOTE_HITS,
      keyPrefix: searchKeyPrefix(origin),
      userId: origin.userId,
      excludeSessionId: origin.sessionId,
      // The whole message is the query: keywords would match its every common word.
      meaningOnly: true,
    })
    .catch((err: unknown) => {
      log.warn({ err: describeError(err) }, "recall prefetch failed; the turn goes on without it");
      return [];
    });
  const own = hits.filter((h) => h.sessionId !== origin.sessionId);
  if (own.length === 0) return undefined;
  const header = "[From earlier conversations with this user (found by search; they may not be relevant):]";
  let note = header;
  for (const hit of own) {
    const date = new Date(hit.createdAt).toISOString().slice(0, 10);
    const title = hit.sessionTitle ? ` "${hit.sessionTitle.slice(0, 60)}"` : "";
    const line = `- ${date}${title} ${hit.role}: ${hit.snippet.replace(/\s+/g, " ").trim().slice(0, 300)}`;
    if (note.length + line.length + 1 > job.recall.maxChars) break;
    note += `\n${line}`;
  }
  return note === header ? undefined : note;
}
