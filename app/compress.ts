/**
 * `/compress` wired for the gateway: the compressor of `agent/compression.ts` on the configured model,
 * its compaction committed to the session the way a turn's is.
 */
import { compressNow } from "../agent/compression.js";
import { createModelClient } from "../agent/model-client.js";
import type { Logger } from "../core/logger.js";
import type { HistoryItem } from "../core/turn.js";
import type { CompressSession } from "../gateway/session-commands.js";
import type { RunnerState } from "../gateway/types.js";
import type { HeraldConfig } from "./config.js";

/** The runner's `compress` option. */
export function createSessionCompressor(
  config: HeraldConfig,
  state: Pick<RunnerState, "sessions" | "transaction">,
  logger: Logger,
  options: { retryBaseDelayMs?: number | undefined } = {},
): CompressSession {
  const client = createModelClient({ ...config.model, retryBaseDelayMs: options.retryBaseDelayMs });
  return async (session, history) => {
    const result = await compressNow({ history, client });
    if (!result) return { kind: "short" };
    const { uptoSeq, summary } = result.compaction;
    const summarised = fingerprint(history, uptoSeq);
    const committed = state.transaction(() => {
      // Only over exactly what was summarised: an /undo meanwhile (seqs then name other messages) or a
      // turn's own compaction leaves the session as it is.
      const now = state.sessions.load(session.id).map((m) => ({ seq: m.seq, message: m.message }));
      if (fingerprint(now, uptoSeq) !== summarised) return false;
      state.sessions.compact(session.id, uptoSeq, summary);
      return true;
    });
    logger.info(
      { sessionId: session.id, committed, replaced: result.replaced, ...result.usage },
      "session compressed on request",
    );
    if (!committed) return { kind: "changed" };
    const { beforeTokens, afterTokens, replaced } = result;
    return { kind: "compressed", beforeTokens, afterTokens, replaced };
  };
}

/** The messages up to `uptoSeq`, as one comparable string. */
function fingerprint(history: readonly HistoryItem[], uptoSeq: number): string {
  return JSON.stringify(history.filter((h) => h.seq <= uptoSeq));
}
