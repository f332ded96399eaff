/**
 * The job handler both queue backends run: a `TurnJob` in, a `TurnResult` out, via `runTurn`.
 */

import { describeError, isAbortError } from "../core/errors.js";
import { lazyChild } from "../core/logger.js";
import type { JobHandler } from "../core/turn.js";
import { runTurn, type TurnDeps } from "./loop.js";
import { addSpokenReply } from "./voice-reply.js";

/** What the handler shares across turns; the queue supplies each turn's signal and progress. */
export type TurnHandlerDeps = Omit<TurnDeps, "signal" | "progress" | "idle">;

/**
 * Builds the queue's job handler. It resolves with `ok` or `failed` results (a failed turn already
 * spent its model retries and has a message for the user; running it again would repeat its tools),
 * and rejects only when the queue's signal aborted the turn (the queue discards it).
 */
export function createTurnHandler(deps: TurnHandlerDeps): JobHandler {
  return async (job, ctx) => {
    const log = lazyChild(deps.logger, { turnId: job.turnId });
    const startedAt = performance.now();
    try {
      const ran = await runTurn(job, { ...deps, signal: ctx.signal, progress: ctx.progress, idle: ctx.idle });
      const result = await addSpokenReply(ran, job, deps.speakReply, ctx.signal, log);
      log.info(
        {
          kind: result.kind,
          durationMs: Math.round(performance.now() - startedAt),
          ...(result.kind === "ok"
            ? { model: result.model, ...result.usage }
            : { retryable: result.retryable }),
        },
        "turn finished",
      );
      return result;
    } catch (err) {
      if (isAbortError(err)) log.info("turn cancelled");
      else log.error({ err: describeError(err) }, "turn handler failed");
      throw err;
    }
  };
}
