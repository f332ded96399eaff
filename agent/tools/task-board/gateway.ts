/**
 * The task board on the gateway: the board in the gateway's state file (`SqliteTaskBoard`), served to
 * `task_board` as its StateClient member, and a claim given back when the turn that holds it fails.
 */
import type { GatewayEvents, TurnRecord, TurnResult } from "../../../core/turn.js";
import { type SqliteState, SqliteTaskBoard } from "../../../sessions/index.js";
import type { TaskBoardStateApi } from "./state.js";

/** What the task board needs of the gateway's runner (`GatewayRunner` has this shape). */
export type TaskBoardGateway = GatewayEvents<{ type: "turn-finished"; turn: TurnRecord; result: TurnResult }>;

/** The settings the board reads (`HeraldConfig` has this shape). */
export interface TaskBoardConfig {
  taskBoard: { claimTtlS: number };
}

/** Builds the board on the gateway's state (subscribes to the runner's turn-finished events at once). */
export function createTaskBoard(
  config: TaskBoardConfig,
  ports: {
    gateway: TaskBoardGateway;
    state: Pick<SqliteState, "database" | "transaction">;
  },
): { board: SqliteTaskBoard; stateApi: TaskBoardStateApi } {
  const { state } = ports;
  const transaction = <T>(fn: () => T): T => state.transaction(fn);
  const board = new SqliteTaskBoard(state.database, { claimTtlMs: config.taskBoard.claimTtlS * 1000 });
  ports.gateway.on("turn-finished", ({ turn, result }) => {
    if (result.kind === "failed") transaction(() => board.release(turn.id));
  });
  return {
    board,
    stateApi: {
      create: async (task, actor) => transaction(() => board.create(task.title, task.details, actor)),
      claim: async (actor, id) => transaction(() => board.claim(actor, id)),
      update: async (id, change, actor) => transaction(() => board.update(id, change, actor)),
      complete: async (id, outcome, result, actor) =>
        transaction(() => board.complete(id, outcome, result, actor)),
      list: async (filter) => board.list(filter),
    },
  };
}
