/**
 * The agent's plans, wired for the gateway (part of the composition root): the store on the gateway's
 * state (key-value namespace `todo`, by session key), `/todo`, and a session's end forgetting its plan.
 */

import { TodoStore, todoCommands } from "../agent/tools/todo/index.js";
import type { TodoStateApi } from "../agent/types.js";
import type { GatewayRunner } from "../gateway/runner.js";

/** Builds plans on `runner` (registers `/todo` and the session-end handler at once). */
export function createTodo(runner: GatewayRunner): { stateApi: TodoStateApi } {
  const { state } = runner;
  const store = new TodoStore(state.kv("todo"));
  runner.commands.add(todoCommands(store));
  runner.on("session-ended", ({ session: ended }) => state.transaction(() => store.forget(ended.key)));
  return {
    stateApi: {
      get: async (key) => store.get(key),
      set: async (key, items) => state.transaction(() => store.set(key, items)),
    },
  };
}
