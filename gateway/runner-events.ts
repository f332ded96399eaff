/**
 * What the runner tells the features around it, and what it asks them.
 *
 * Told: one stream of events, a discriminated union on `type` (`RunnerEvent`), each emitted once what
 * it reports is committed. A feature subscribes with `on(type, handler)`, which returns its unsubscribe.
 * A handler that throws is logged with the event's type; the other handlers still hear, and the runner
 * goes on.
 *
 * Asked: three questions whose answers the runner uses, each with a registration of its own because
 * each combines its answers its own way: what `/stop` also stops (a sum), who answers `/stop <id>`
 * (the first answer), the extra lines of `/status` (every line). They run inside the command's
 * transaction and must not throw.
 */
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { RunnerEvent } from "./types.js";

/** The type tags of the runner's events. */
export type RunnerEventType = RunnerEvent["type"];

/** The event with tag `T`. */
export type RunnerEventOf<T extends RunnerEventType> = Extract<RunnerEvent, { type: T }>;

/** A handler of the events tagged `T`. Must not throw (a throw is logged). */
export type RunnerEventHandler<T extends RunnerEventType> = (event: RunnerEventOf<T>) => void;

/** The runner's event stream. */
export class RunnerEvents {
  readonly #handlers = new Map<RunnerEventType, Set<(event: RunnerEvent) => void>>();

  constructor(private readonly log: Logger) {}

  /** Calls `handler` with every event tagged `type` from now on; returns its unsubscribe. */
  on<T extends RunnerEventType>(type: T, handler: RunnerEventHandler<T>): () => void {
    const handlers = this.#handlers.get(type) ?? new Set();
    this.#handlers.set(type, handlers);
    // Stored per tag, so a handler only ever gets the events it was added for.
    const entry = handler as (event: RunnerEvent) => void;
    handlers.add(entry);
    return () => handlers.delete(entry);
  }

  /** Tells every handler of `event.type`, in subscription order. Never throws. */
  emit(event: RunnerEvent): void {
    for (const handler of this.#handlers.get(event.type) ?? []) {
      try {
        handler(event);
      } catch (err) {
        this.log.error({ event: event.type, error: describeError(err) }, "a runner event handler failed");
      }
    }
  }
}

/** Stops what else runs in a session on `/stop` (a pending approval); returns how many it stopped. */
export type Stopper = (sessionKey: string) => number;
/** Answers `/stop <id>` for a task it knows (a background task), else undefined. */
export type TaskStopper = (id: string, sessionKey: string) => string | undefined;
/** One more line of `/status` (loaded plugins). */
export type StatusLine = () => string;

/** The runner's questions, each with its own registration and its own way to combine answers. */
export class RunnerHooks {
  readonly #stoppers = new Set<Stopper>();
  readonly #taskStoppers = new Set<TaskStopper>();
  readonly #statusLines = new Set<StatusLine>();

  /** Adds what `/stop` also stops; returns its removal. */
  addStopper(stopper: Stopper): () => void {
    return added(this.#stoppers, stopper);
  }

  /** Adds an answer to `/stop <id>`; returns its removal. */
  addTaskStopper(stopper: TaskStopper): () => void {
    return added(this.#taskStoppers, stopper);
  }

  /** Adds a line to `/status`; returns its removal. */
  addStatusLine(line: StatusLine): () => void {
    return added(this.#statusLines, line);
  }

  /** How many things the stoppers stopped in `sessionKey`. */
  stop(sessionKey: string): number {
    let stopped = 0;
    for (const stopper of this.#stoppers) stopped += stopper(sessionKey);
    return stopped;
  }

  /** The first task stopper's answer to `/stop <id>`, or undefined when none knows `id`. */
  stopTask(id: string, sessionKey: string): string | undefined {
    for (const stopper of this.#taskStoppers) {
      const answer = stopper(id, sessionKey);
      if (answer !== undefined) return answer;
    }
    return undefined;
  }

  /** Every extra line of `/status`, in registration order. */
  statusLines(): string[] {
    return [...this.#statusLines].map((line) => line());
  }
}

function added<T>(set: Set<T>, item: T): () => void {
  set.add(item);
  return () => set.delete(item);
}
