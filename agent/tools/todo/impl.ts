/** What `todo` does (`declaration.ts` declares it). */
import type { ToolRun } from "../../tool-declaration.js";
import type { TodoItem } from "../../types.js";
import type { todoParameters } from "./declaration.js";
import { formatTodo, MAX_TODO_ITEMS } from "./store.js";

/** Runs one `todo` call. */
export const runTodo: ToolRun<typeof todoParameters> = async (args, ctx) => {
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
};
