/** `/todo`: shows the agent's plan for this conversation (what the `todo` tool keeps). */
import type { CommandModule } from "../../../core/commands.js";
import { formatTodo, type TodoStore } from "./store.js";

/** The `/todo` command on `store`. */
export function todoCommands(store: TodoStore): CommandModule {
  return {
    commands: {
      todo: {
        description: "show my plan for this conversation",
        run: ({ sessionKey }) => {
          const items = store.get(sessionKey);
          if (items.length === 0) return "No plan yet in this conversation.";
          // A code block keeps the check marks aligned and unformatted on every platform.
          return `📋 ${formatTodo(items).replace("\n", "\n```\n")}\n\`\`\``;
        },
      },
    },
  };
}
