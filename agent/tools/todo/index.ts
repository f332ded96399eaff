/**
 * `todo`: the agent's plan for the task at hand, kept per session through `StateClient.todo` (outside
 * the history: it survives compression and restarts). `add` appends steps, `update` changes one step's
 * status or text, `list` shows it, `clear` empties it; every action answers with the whole plan.
 * The user sees it with `/todo`.
 */
export { todoCommands } from "./commands.js";
export { todoTool } from "./declaration.js";
export { createTodo, type TodoGateway } from "./gateway.js";
export { formatTodo, MAX_TODO_ITEMS, TodoStore } from "./store.js";
