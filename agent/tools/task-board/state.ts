/**
 * The `taskBoard` member of the `StateClient`: the shared task board, stored by the gateway, as the
 * `task_board` tool reaches it, with the argument schemas of its methods for the gateway's state API.
 */
import { z } from "zod";
import type { MethodsOf, StateMethodSchemas } from "../../state-methods.js";

declare module "../../types.js" {
  interface StateClient {
    /** The shared task board (`task_board`, `herald tasks`). */
    taskBoard?: TaskBoardStateApi | undefined;
  }
}

/** A task of the shared board. */
export interface BoardTask {
  id: number;
  title: string;
  details?: string | undefined;
  state: "todo" | "claimed" | "done" | "failed";
  owner?: string | undefined;
  result?: string | undefined;
  /** Until when a claim holds (epoch ms) unless the claiming turn renews it. */
  claimExpiresAt?: number | undefined;
  createdAt: number;
  updatedAt: number;
}

/** Who acts on the board: a name people read, and the turn whose end releases its claims. */
export interface BoardActor {
  owner: string;
  turnId?: string | undefined;
}

/** The shared task board, stored by the gateway; claims are atomic across every worker. */
export interface TaskBoardStateApi {
  create(task: { title: string; details?: string | undefined }, actor: BoardActor): Promise<BoardTask>;
  /** Claims `id`, or the oldest claimable task; undefined when none is free. */
  claim(actor: BoardActor, id?: number): Promise<BoardTask | undefined>;
  /** Changes a task's title, details or result (a claim is renewed). */
  update(
    id: number,
    change: { title?: string | undefined; details?: string | undefined; result?: string | undefined },
    actor: BoardActor,
  ): Promise<BoardTask>;
  /** Ends a task as done or failed with its result. */
  complete(id: number, outcome: "done" | "failed", result: string, actor: BoardActor): Promise<BoardTask>;
  list(filter?: { state?: BoardTask["state"] | undefined; limit?: number | undefined }): Promise<BoardTask[]>;
}

const boardActor = z.strictObject({ owner: z.string().min(1).max(200), turnId: z.string().optional() });

/** The argument schemas of the `taskBoard` member. */
export const taskBoardStateMethods = {
  "taskBoard.create": z.tuple([
    z.strictObject({ title: z.string().min(1).max(500), details: z.string().max(20_000).optional() }),
    boardActor,
  ]),
  "taskBoard.claim": z.tuple([boardActor, z.number().int().positive().optional()]),
  "taskBoard.update": z.tuple([
    z.number().int().positive(),
    z.strictObject({
      title: z.string().min(1).max(500).optional(),
      details: z.string().max(20_000).optional(),
      result: z.string().max(20_000).optional(),
    }),
    boardActor,
  ]),
  "taskBoard.complete": z.tuple([
    z.number().int().positive(),
    z.enum(["done", "failed"]),
    z.string().max(20_000),
    boardActor,
  ]),
  "taskBoard.list": z.tuple([
    z
      .strictObject({
        state: z.enum(["todo", "claimed", "done", "failed"]).optional(),
        limit: z.number().int().positive().max(1000).optional(),
      })
      .optional(),
  ]),
} satisfies StateMethodSchemas<MethodsOf<"taskBoard">>;
