/**
 * The two StateClients. In-process: what tools need of shared state, served straight from the gateway's
 * SqliteState and the features' members (the embedded default). Over HTTP: a remote worker's, with a
 * function for every method of the table (`state-methods.ts`), served by the gateway's state API.
 */
import {
  buildHttpStateClient,
  type HttpStateClientOptions,
  type StateClient,
  type StateMember,
  type StateMethodName,
} from "../agent/index.js";
import type { RunnerState } from "../gateway/types.js";
import { stateMethods } from "./state-methods.js";

/** Every optional member of the StateClient, present: what the gateway serves. */
export type StateMembers = {
  [K in Exclude<StateMember, "searchSessions">]-?: NonNullable<StateClient[K]>;
};

/**
 * Builds the in-process StateClient over the gateway's state, plus optional members (`cron`). The
 * gateway's own passes every member (`satisfies StateMembers`), so a member a feature adds and the
 * gateway does not serve fails the type check. `searchSessions` is `search` when given (the gateway's
 * recall: keywords and meaning), else the state's keyword search.
 */
export function createLocalStateClient(
  state: RunnerState,
  extensions: Partial<StateMembers> = {},
  search?: StateClient["searchSessions"],
): StateClient {
  return {
    searchSessions: search ?? (async (query, options) => state.sessions.search(query, options)),
    ...extensions,
  };
}

/**
 * Builds the HTTP StateClient of a worker: every method of every member, each a call to the gateway's
 * state API (see `buildHttpStateClient` for how its methods fail).
 */
export function createHttpStateClient(options: HttpStateClientOptions): StateClient {
  return buildHttpStateClient(Object.keys(stateMethods) as StateMethodName[], options);
}
