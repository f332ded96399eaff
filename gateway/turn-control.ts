/**
 * The runner's `TurnControl`: what commands and the scheduler may do to turns and sessions. Each
 * operation is one unit of work (a transaction whose effects run after its commit), nested in the
 * caller's when a command calls it inside the inbound transaction.
 */
import type { NewTurn, TurnControl } from "../core/turn.js";
import type { OutboxDispatcher } from "./outbox-dispatcher.js";
import type { TurnCoordinator } from "./turns.js";
import type { EndedSession, RunnerState } from "./types.js";
import type { UnitOfWork } from "./work.js";

/** What the turn port works on. */
export interface TurnControlDeps {
  state: RunnerState;
  work: UnitOfWork;
  turns: Pick<TurnCoordinator, "claimNext" | "claimNew" | "cancel">;
  outbox: Pick<OutboxDispatcher, "deliver">;
  adapters: ReadonlyMap<string, unknown>;
  /** Tells that a session ended (runs after the reset committed). */
  sessionEnded: (session: EndedSession) => void;
  now: () => number;
}

/** Builds the turn port over the runner's state, turn coordinator and outbox. */
export function createTurnControl(deps: TurnControlDeps): TurnControl {
  const { state, work, turns } = deps;
  return {
    submit: (turn: NewTurn) =>
      work.run((effects) => {
        const existing = state.turns.get(turn.id);
        if (!existing)
          return turns.claimNew(turn.sessionKey, effects, (running) =>
            state.turns.create(turn, deps.now(), { running }),
          );
        turns.claimNext(turn.sessionKey, effects, existing);
        return existing;
      }),
    cancel: (key, reason, options) =>
      work.run((effects) => turns.cancel(key, reason, effects, options?.keepInput ?? false)),
    reset: (key) =>
      work.run((effects) => {
        turns.cancel(key, "session reset", effects, false);
        const ended = state.sessions.reset(key, "manual");
        if (ended) effects.push(() => deps.sessionEnded({ id: ended.id, key, reason: "manual" }));
        return ended !== undefined;
      }),
    notify: (chat, text, options) =>
      work.run((effects) => {
        const message = { text, kind: "notice" as const, buttons: options?.buttons };
        const item = state.outbox.add(chat, message, undefined, deps.now());
        effects.push(() => deps.outbox.deliver(item));
      }),
    openTurns: (key) => state.turns.openTurns(key),
    isRunning: (platform) => deps.adapters.has(platform),
  };
}
