/**
 * Housekeeping of the state file: the inbound ledger, finished turns and settled outbox items only
 * matter while a platform may still redeliver or a restart may still need them, so rows older than the
 * retention are deleted at start and every few hours, with the API's stored responses that expired. Sessions and their messages are the user's and
 * are never pruned here (`herald sessions prune` does that on request). `filesInUse` tells the cache's
 * housekeeping (agent/exec/housekeeping.ts) which cached files open turns and undelivered replies still
 * name.
 */
import { resolve } from "node:path";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { RunnerState } from "./types.js";

export interface MaintenanceOptions {
  state: RunnerState;
  logger: Logger;
  /**
   * How long handled ledger entries, finished turns and settled outbox items are kept. Platforms
   * redeliver within hours at most (Telegram keeps updates 24 h). @defaultValue 14 days
   */
  retentionMs?: number;
  /** @defaultValue 6 hours */
  intervalMs?: number;
  now?: () => number;
}

/** One pass; returns what it deleted. Never throws (a failure is logged and retried next pass). */
export function pruneState(options: MaintenanceOptions): {
  ledger: number;
  turns: number;
  outbox: number;
  responses: number;
} {
  const { state, logger } = options;
  const now = (options.now ?? Date.now)();
  const before = now - (options.retentionMs ?? 14 * 86_400_000);
  try {
    const removed = state.transaction(() => ({
      ledger: state.ledger.prune(before),
      turns: state.turns.prune?.(before) ?? 0,
      outbox: state.outbox.prune?.(before) ?? 0,
      // Stored API responses carry their own expiry (API_SERVER_RESPONSES_TTL_DAYS).
      responses: state.responses?.prune(now) ?? 0,
    }));
    if (removed.ledger + removed.turns + removed.outbox + removed.responses > 0)
      logger.info(removed, "pruned old state rows");
    return removed;
  } catch (err) {
    logger.warn({ error: describeError(err) }, "state pruning failed");
    return { ledger: 0, turns: 0, outbox: 0, responses: 0 };
  }
}

/** Prunes now and every `intervalMs`; returns the stop function. */
export function startMaintenance(options: MaintenanceOptions): () => void {
  pruneState(options);
  const timer = setInterval(() => pruneState(options), options.intervalMs ?? 6 * 3_600_000);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * The files open turns and undelivered replies still name: the attachments of every pending or running
 * turn in the journal, and the files of every reply waiting in the outbox. Read from the gateway's state
 * (synchronous SQLite reads). @throws when the state file is closed
 */
export function filesInUse(state: Pick<RunnerState, "turns" | "outbox">): Set<string> {
  const paths = new Set<string>();
  for (const turn of state.turns.allOpen())
    for (const attachment of turn.inbound?.attachments ?? []) paths.add(resolve(attachment.path));
  for (const item of state.outbox.pending())
    for (const file of item.message.files ?? []) paths.add(resolve(file.path));
  return paths;
}
