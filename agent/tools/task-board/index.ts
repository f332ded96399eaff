/**
 * `task_board`: the shared board that agents and people both see (`herald tasks list|show`). `create`
 * adds a task, `claim` takes one (the oldest free one, or `id`) atomically across every worker, `update`
 * changes its text or result, `complete` ends it as done or failed, `list` shows the board. A claim ends
 * with the claiming turn: a turn that dies without completing its task gives it back.
 */
import { z } from "zod";
import { defineTool } from "../../tool-registry.js";
import type { ToolContext } from "../../types.js";
import type { BoardActor, BoardTask } from "./state.js";

export { createTaskBoard, type TaskBoardConfig, type TaskBoardGateway } from "./gateway.js";
export { type BoardActor, type BoardTask, type TaskBoardStateApi, taskBoardStateMethods } from "./state.js";

const parameters = z.object({
  action: z.enum(["create", "claim", "update", "complete", "list"]),
  id: z.number().int().positive().optional().describe("claim (optional), update, complete: the task's id."),
  title: z.string().trim().min(1).max(500).optional().describe("create, update: the task in one line."),
  details: z.string().max(20_000).optional().describe("create, update: what the task needs."),
  result: z.string().max(20_000).optional().describe("update, complete: what came of it."),
  outcome: z.enum(["done", "failed"]).optional().describe("complete: done (default) or failed."),
  state: z.enum(["todo", "claimed", "done", "failed"]).optional().describe("list: only this state."),
});

/** One line per task. */
export function boardLine(task: BoardTask): string {
  const who = task.owner && task.state !== "todo" ? ` (${task.owner})` : "";
  const result = task.result ? ` → ${task.result.slice(0, 200)}` : "";
  return `#${task.id} [${task.state}]${who} ${task.title}${result}`;
}

function actorOf(ctx: ToolContext): BoardActor {
  const name = ctx.origin.userName ?? ctx.origin.userId;
  return { owner: `${ctx.origin.chat.platform}:${name}`, turnId: ctx.turnId };
}

/** The `task_board` tool (toolset "tasks"). */
export const taskBoardTool = defineTool({
  name: "task_board",
  description:
    "The shared task board (people see it with `herald tasks list`). create: add a task (title, details); claim: take the oldest free task, or `id` (no two agents ever get the same task; your claim lapses if this turn dies, or some minutes after it unless you complete it); update: change title, details or result; complete: finish a task you claimed (outcome done or failed, result); list: show tasks (optionally by state).",
  parameters,
  toolset: "tasks",
  label: (args) => `📌 task_board ${args.action}${args.id !== undefined ? ` #${args.id}` : ""}`,
  async execute(args, ctx) {
    const board = ctx.state.taskBoard;
    if (!board) return { content: "error: the task board is not reachable here.", isError: true };
    const actor = actorOf(ctx);
    switch (args.action) {
      case "create": {
        if (!args.title) return { content: "error: create needs `title`.", isError: true };
        const task = await board.create({ title: args.title, details: args.details }, actor);
        return `Created ${boardLine(task)}`;
      }
      case "claim": {
        const task = await board.claim(actor, args.id);
        if (!task)
          return args.id === undefined
            ? "No free task on the board."
            : `Task #${args.id} is not free (claimed by someone else, finished, or unknown).`;
        return `Claimed ${boardLine(task)}${task.details ? `\ndetails: ${task.details}` : ""}`;
      }
      case "update": {
        if (args.id === undefined) return { content: "error: update needs `id`.", isError: true };
        const task = await board.update(
          args.id,
          { title: args.title, details: args.details, result: args.result },
          actor,
        );
        return `Updated ${boardLine(task)}`;
      }
      case "complete": {
        if (args.id === undefined) return { content: "error: complete needs `id`.", isError: true };
        const task = await board.complete(args.id, args.outcome ?? "done", args.result ?? "", actor);
        return `Completed ${boardLine(task)}`;
      }
      case "list": {
        const tasks = await board.list({ state: args.state, limit: 100 });
        return tasks.length ? tasks.map(boardLine).join("\n") : "The board is empty.";
      }
    }
  },
});
