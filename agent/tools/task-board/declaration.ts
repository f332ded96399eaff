/** The `task_board` tool's declaration; its implementation (`impl.ts`) loads on its first call. */

import { z } from "zod";
import { declareTool } from "../../tool-declaration.js";

/** `task_board`'s arguments. */
export const taskBoardParameters = z.object({
  action: z.enum(["create", "claim", "update", "complete", "list"]),
  id: z.number().int().positive().optional().describe("claim (optional), update, complete: the task's id."),
  title: z.string().trim().min(1).max(500).optional().describe("create, update: the task in one line."),
  details: z.string().max(20_000).optional().describe("create, update: what the task needs."),
  result: z.string().max(20_000).optional().describe("update, complete: what came of it."),
  outcome: z.enum(["done", "failed"]).optional().describe("complete: done (default) or failed."),
  state: z.enum(["todo", "claimed", "done", "failed"]).optional().describe("list: only this state."),
});

/** The `task_board` tool (toolset "tasks"). */
export const taskBoardTool = declareTool({
  name: "task_board",
  description:
    "The shared task board (people see it with `herald tasks list`). create: add a task (title, details); claim: take the oldest free task, or `id` (no two agents ever get the same task; your claim lapses if this turn dies, or some minutes after it unless you complete it); update: change title, details or result; complete: finish a task you claimed (outcome done or failed, result); list: show tasks (optionally by state).",
  parameters: taskBoardParameters,
  toolset: "tasks",
  label: (args) => `📌 task_board ${args.action}${args.id !== undefined ? ` #${args.id}` : ""}`,
  implementation: () => import("./impl.js").then((m) => m.runTaskBoard),
});
