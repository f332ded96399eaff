/**
 * `todo`: the agent's plan for the task at hand, kept per session through `StateClient.todo` (outside
 * the history: it survives compression and restarts). `add` appends steps, `update` changes one step's
 * status or text, `list` shows it, `clear` empties it; every action answers with the whole plan.
 * The user sees it with `/todo`.
 */
import { z } from "zod";
import { defineTool } from "../../tool-registry.js";
import type { TodoItem } from "../../types.js";
import { formatTodo, MAX_TODO_ITEMS } from "./store.js";

export { todoCommands } from "./commands.js";
export { createTodo, type TodoGateway } from "./gateway.js";
export { formatTodo, MAX_TODO_ITEMS, TodoStore } from "./store.js";

const status = z.enum(["pending", "in_progress", "done", "cancelled"]);

const parameters = z.object({
  action: z.enum(["add", "update", "list", "clear"]),
  items: z
    .array(z.string().trim().min(1).max(1000))
    .max(MAX_TODO_ITEMS)
    .optional()
    .describe("add: the steps to append, in order."),
  id: z.number().int().positive().optional().describe("update: the step's number."),
  status: status.optional().describe("update: the step's new status."),
  text: z.string().trim().min(1).max(1000).optional().describe("update: the step's new wording."),
});

/** The `todo` tool (toolset "core"). */
export const todoTool = defineTool({
  name: "todo",
  description:
    "Your plan for a task of several steps, kept for this conversation (it outlasts long histories and restarts; the user sees it with /todo). add: append steps; update: set one step's status (pending, in_progress, done, cancelled) or text; list: show it; clear: empty it. Keep one step in_progress at a time.",
  parameters,
  toolset: "core",
  label: (args) => `📋 todo ${args.action}${args.id !== undefined ? ` ${args.id}` : ""}`,
  async execute(args, ctx) {
    const api = ctx.state.todo;
    if (!api) return { content: "error: the plan cannot be kept here (no state for it).", isError: true };
    const key = ctx.origin.sessionKey;
    const items = await api.get(key);
    switch (args.action) {
      case "list":
        return formatTodo(items);
      case "clear":
        await api.set(key, []);
        return "The plan is cleared.";
      case "add": {
        if (!args.items?.length)
          return { content: "error: add needs `items`: the steps to append.", isError: true };
        if (items.length + args.items.length > MAX_TODO_ITEMS)
          return {
            content: `error: a plan holds at most ${MAX_TODO_ITEMS} steps (it has ${items.length}); clear done steps first.`,
            isError: true,
          };
        let next = Math.max(0, ...items.map((i) => i.id));
        const added: TodoItem[] = args.items.map((text) => ({ id: ++next, text, status: "pending" }));
        const all = [...items, ...added];
        await api.set(key, all);
        return formatTodo(all);
      }
      case "update": {
        const item = items.find((i) => i.id === args.id);
        if (!item) {
          const ids = items.map((i) => i.id).join(", ") || "none";
          return { content: `error: update needs the \`id\` of a step (steps: ${ids}).`, isError: true };
        }
        if (!args.status && !args.text)
          return { content: "error: update needs `status` or `text`.", isError: true };
        const changed = items.map((i) =>
          i.id === item.id
            ? {
                ...i,
                ...(args.status ? { status: args.status } : {}),
                ...(args.text ? { text: args.text } : {}),
              }
            : i,
        );
        await api.set(key, changed);
        return formatTodo(changed);
      }
    }
  },
});
