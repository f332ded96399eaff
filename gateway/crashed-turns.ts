/**
 * Turns that ended the process running them. A turn found still running at start was cut short by the
 * end of the previous process (a crash, an out-of-memory kill): it runs once more, since the cause may
 * have been anything. Found running again at the next start, it is the likely cause (a file or a tool
 * output that crashes Herald), so it is failed with a message to its chat instead of crashing every
 * restart. On Redis the queue applies the same rule to a worker that dies (BullMQ's stalled jobs).
 */
import type { Logger } from "../core/logger.js";
import type { TurnRecord, TurnResult } from "../core/turn.js";

/** Runs of one turn that may end the process before it is failed rather than run again. */
export const MAX_CRASHED_RUNS = 2;

/** What the chat is told about a turn that ended the process twice. */
export function crashedTurnMessage(turnId: string): string {
  return (
    "This message made Herald stop twice; it was not run again — something it asked for (a very large " +
    "file or tool output, a plugin) crashes Herald. Ask for less at once, or ask the operator to look " +
    `in the logs for turn ${turnId}.`
  );
}

/** The failure recorded for such a turn (nothing of it is kept in the session). */
export function crashedTurnResult(turnId: string, error: string): TurnResult {
  return {
    kind: "failed",
    turnId,
    userMessage: crashedTurnMessage(turnId),
    error,
    code: "turn_crashed",
    retryable: false,
    messages: [],
  };
}

/**
 * Sorts the turns `requeueCrashed` returned: the ones to fail (they crashed the process before), each
 * logged with its id. The others run again; they are logged too, since the crash may have said nothing.
 */
export function crashedTurnsToFail(crashed: readonly TurnRecord[], log: Logger): TurnRecord[] {
  const fail: TurnRecord[] = [];
  for (const turn of crashed) {
    const fields = { turnId: turn.id, sessionKey: turn.sessionKey, runs: turn.attempts };
    if (turn.attempts >= MAX_CRASHED_RUNS) {
      log.error(
        fields,
        "a turn was running at each of the last two ends of the process; failed, not run again",
      );
      fail.push(turn);
    } else {
      log.warn(
        fields,
        "a turn was running when the process ended without a clean stop; running it once more",
      );
    }
  }
  return fail;
}
