/**
 * Units of work: a state transaction plus the effects that must wait for its commit. Units nest: a unit
 * opened inside another (a command calling the turn port inside the inbound transaction) is a savepoint
 * of it, and its effects join the outer unit's, so nothing runs before the outermost commit.
 */
import type { Effect, RunnerState } from "./types.js";

/** Runs units of work on one state. */
export class UnitOfWork {
  private current: Effect[] | undefined;

  constructor(private readonly state: Pick<RunnerState, "transaction" | "afterCommit">) {}

  /** Runs `fn` in a transaction; the effects it adds run, in order, after the commit. */
  run<T>(fn: (effects: Effect[]) => T): T {
    if (this.current) {
      const effects = this.current;
      return this.state.transaction(() => fn(effects));
    }
    const effects: Effect[] = [];
    this.current = effects;
    let result: T;
    try {
      result = this.state.transaction(() => fn(effects));
    } finally {
      this.current = undefined;
    }
    this.after(effects);
    return result;
  }

  /** Runs `effects` once what was written before them is committed. */
  after(effects: Effect[]): void {
    if (effects.length === 0) return;
    this.state.afterCommit(() => {
      for (const effect of effects) effect();
    });
  }
}
