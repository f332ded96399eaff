/**
 * `/compress` on the gateway: the compressor of `compression.ts` on the configured model, its
 * compaction committed to the session the way a turn's is.
 */
import type { Logger } from "../core/logger.js";
import type { HistoryItem } from "../core/turn.js";
import type { SessionStore } from "../sessions/index.js";
import { compressNow } from "./compression.js";
import { createModelClient, type ModelClientConfig } from "./model-client.js";

/** What `/compress` did (the gateway's `CompressReport`). */
export type SessionCompression =
  | { kind: "compressed"; beforeTokens: number; afterTokens: number; replaced: number }
  | { kind: "short" }
  | { kind: "changed" };

/** The settings the compressor reads (`HeraldConfig` has this shape). */
export interface SessionCompressorConfig {
  model: Omit<ModelClientConfig, "retryBaseDelayMs">;
}

/** What the compressor is built on. */
export interface SessionCompressorPorts {
  state: { sessions: Pick<SessionStore, "load" | "compact">; transaction<T>(fn: () => T): T };
  logger: Logger;
  /** Overrides the model client's retry timing (tests). */
  retryBaseDelayMs?: number | undefined;
}

/** The runner's `compress` option. */
export function createSessionCompressor(
  config: SessionCompressorConfig,
  ports: SessionCompressorPorts,
): (session: { id: string }, history: HistoryItem[]) => Promise<SessionCompression> {
  const { state, logger } = ports;
  const client = createModelClient({ ...config.model, retryBaseDelayMs: ports.retryBaseDelayMs });
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
