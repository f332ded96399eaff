/**
 * The agent's plans on the gateway: the store on the gateway's state (key-value namespace `todo`, by
 * session key), `/todo`, and a session's end forgetting its plan.
 */
import type { CommandModule } from "../../../core/commands.js";
import type { GatewayEvents } from "../../../core/turn.js";
import type { KeyValueStore } from "../../../core/types.js";
import type { TodoStateApi } from "../../types.js";
import { todoCommands } from "./commands.js";
import { TodoStore } from "./store.js";

/** What plans need of the gateway (`GatewayRunner` has this shape). */
export interface TodoGateway extends GatewayEvents<{ type: "session-ended"; session: { key: string } }> {
  state: { kv(namespace: string): KeyValueStore; transaction<T>(fn: () => T): T };
  commands: { add(module: CommandModule): unknown };
}

/** Builds plans on the gateway (registers `/todo` and the session-end handler at once). */
export function createTodo(ports: { gateway: TodoGateway }): { stateApi: TodoStateApi } {
  const { gateway } = ports;
  const { state } = gateway;
  const store = new TodoStore(state.kv("todo"));
  gateway.commands.add(todoCommands(store));
  gateway.on("session-ended", ({ session: ended }) => state.transaction(() => store.forget(ended.key)));
  return {
    stateApi: {
      get: async (key) => store.get(key),
      set: async (key, items) => state.transaction(() => store.set(key, items)),
    },
  };
}
