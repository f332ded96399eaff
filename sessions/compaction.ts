/** What the session stores agree on about compactions, so both load the same history. */
import type { StoredMessage } from "./types.js";

/**
 * The system message that stands in `load()` for the messages a compaction replaced: it carries the
 * summary, and its seq is the last seq the compaction replaced (`uptoSeq`).
 */
export function compactionSummary(
  sessionId: string,
  compaction: { uptoSeq: number; summary: string; createdAt: number },
): StoredMessage {
  return {
    sessionId,
    seq: compaction.uptoSeq,
    message: { role: "system", content: `Summary of the earlier conversation:\n${compaction.summary}` },
    createdAt: compaction.createdAt,
  };
}
