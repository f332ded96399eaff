/**
 * `/compress` wired for the gateway: the compressor of `agent/compression.ts` on the configured model,
 * its compaction committed to the session the way a turn's is.
 */
import { compressNow } from "../agent/compression.js";
import { createModelClient } from "../agent/model-client.js";
import type { Logger } from "../core/logger.js";
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
    if (!result) return undefined;
    const { uptoSeq, summary } = result.compaction;
    const committed = state.transaction(() => {
      // A turn that compacted further meanwhile wins: its summary already covers ours.
      const first = state.sessions.load(session.id)[0];
      if (first?.message.role === "system" && first.seq >= uptoSeq) return false;
      state.sessions.compact(session.id, uptoSeq, summary);
      return true;
    });
    logger.info(
      { sessionId: session.id, committed, replaced: result.replaced, ...result.usage },
      "session compressed on request",
    );
    return committed
      ? { beforeTokens: result.beforeTokens, afterTokens: result.afterTokens, replaced: result.replaced }
      : undefined;
  };
}
