/** What `task_board` does (`declaration.ts` declares it). */
import type { ToolRun } from "../../tool-declaration.js";
import type { ToolContext } from "../../types.js";
import type { taskBoardParameters } from "./declaration.js";
import type { BoardActor, BoardTask } from "./state.js";

/** One line per task. */
function boardLine(task: BoardTask): string {
  const who = task.owner && task.state !== "todo" ? ` (${task.owner})` : "";
  const result = task.result ? ` → ${task.result.slice(0, 200)}` : "";
  return `#${task.id} [${task.state}]${who} ${task.title}${result}`;
}

function actorOf(ctx: ToolContext): BoardActor {
  const name = ctx.origin.userName ?? ctx.origin.userId;
  return { owner: `${ctx.origin.chat.platform}:${name}`, turnId: ctx.turnId };
}

/** Runs one `task_board` call. */
export const runTaskBoard: ToolRun<typeof taskBoardParameters> = async (args, ctx) => {
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
};
