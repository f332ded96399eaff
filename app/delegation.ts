/**
 * Delegation and background work, wired for the gateway (part of the composition root): the children
 * of `delegate_task` (`DelegationService` on the gateway's state and job queue), the task board,
 * `/background`, `/tasks` and `/stop <id>`, and the handlers that end children and claims with their
 * turns.
 */

import { backgroundCommands } from "../agent/delegate/background.js";
import { DelegationService } from "../agent/delegate/service.js";
import type { DelegateStateApi } from "../agent/delegate/state.js";
import type { TaskBoardStateApi } from "../agent/tools/task-board/state.js";
import type { Logger } from "../core/logger.js";
import type { JobQueue } from "../core/turn.js";
import type { GatewayRunner } from "../gateway/runner.js";
import type { SqliteState } from "../sessions/sqlite-state.js";
import { SqliteTaskBoard } from "../sessions/sqlite-task-board.js";
import type { HeraldConfig } from "./config.js";

/** What {@link createDelegation} gives the gateway. */
export interface Delegation {
  service: DelegationService;
  board: SqliteTaskBoard;
  stateApis: { delegate: DelegateStateApi; taskBoard: TaskBoardStateApi };
  /**
   * Runs again the children a previous process left open. Call after `runner.start()`: a parent turn
   * failed there for crashing the process twice takes its children with it, rather than have them
   * crash the process again.
   */
  resume(): void;
  /** Unsubscribes from the queue and clears the timers. */
  close(): void;
}

/** Builds delegation on `runner` (registers the commands and its runner hooks at once). */
export function createDelegation(
  config: HeraldConfig,
  runner: GatewayRunner,
  state: SqliteState,
  queue: JobQueue,
  logger: Logger,
): Delegation {
  const transaction = <T>(fn: () => T): T => state.transaction(fn);
  const { delegation } = config;
  const service = new DelegationService({
    db: state.database,
    queue,
    logger,
    transaction,
    notify: (chat, text, buttons) => runner.control.notify(chat, text, { buttons }),
    recordUsage: (job, lines) => {
      const { origin } = job;
      const turn = { id: job.turnId, sessionId: origin.sessionId, userId: origin.userId, chat: origin.chat };
      state.usage.record(turn, lines, Date.now());
    },
    isTurnOpen: (id) => {
      const turn = state.turns.get(id);
      return turn ? turn.status === "pending" || turn.status === "running" : undefined;
    },
    settings: {
      maxDepth: delegation.maxDepth,
      maxParallel: delegation.maxParallel,
      maxIterations: delegation.maxIterations,
      timeoutMs: delegation.timeoutS * 1000,
    },
  });
  const board = new SqliteTaskBoard(state.database, { claimTtlMs: config.taskBoard.claimTtlS * 1000 });
  const unsubscribe = queue.subscribe(service.onQueueEvent);
  runner.addStopper((key) => service.cancelSession(key));
  runner.on("turn-finished", ({ turn, result }) => {
    service.cancelParent(turn.id);
    if (result.kind === "failed") transaction(() => board.release(turn.id));
  });
  const background = backgroundCommands({
    control: runner.control,
    kv: state.kv("background"),
    groupSessions: config.sessions.groupSessions,
    turn: (id) => state.turns.get(id),
    openSession: (parts, now) => {
      const { session } = state.sessions.open(parts, { mode: "none", idleMinutes: 1440, atHour: 4 }, now);
      return { id: session.id, key: session.key };
    },
  });
  runner.commands.add(background.module);
  runner.addTaskStopper(background.stopTask);
  return {
    service,
    board,
    resume: () => service.recover(),
    stateApis: {
      delegate: service,
      taskBoard: {
        create: async (task, actor) => transaction(() => board.create(task.title, task.details, actor)),
        claim: async (actor, id) => transaction(() => board.claim(actor, id)),
        update: async (id, change, actor) => transaction(() => board.update(id, change, actor)),
        complete: async (id, outcome, result, actor) =>
          transaction(() => board.complete(id, outcome, result, actor)),
        list: async (filter) => board.list(filter),
      },
    },
    close() {
      unsubscribe();
      service.close();
    },
  };
}
