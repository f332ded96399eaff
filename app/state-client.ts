/**
 * The in-process StateClient: what tools need of shared state, served straight from the gateway's
 * SqliteState (the embedded default). Remote workers use the HTTP implementation instead.
 */
import type { StateClient } from "../agent/types.js";
import type { RunnerState } from "../gateway/types.js";

/** Builds the in-process StateClient over the gateway's state, plus optional members (`cron`). */
export function createLocalStateClient(
  state: RunnerState,
  extensions: Partial<StateClient> = {},
): StateClient {
  return {
    searchSessions: async (query, options) => state.sessions.search(query, options),
    ...extensions,
  };
}
