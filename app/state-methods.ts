/**
 * Every `StateClient` method a remote worker may call, with its argument schemas: the agent's own
 * members and each feature's, as each declares them beside its member. The type check holds the table
 * against the `StateClient` (every member merged in included): a member left out here fails it. The
 * HTTP client builds its members from this table and the gateway's state API validates calls with it.
 */
import { delegateStateMethods } from "../agent/delegate/state.js";
import { approvalStateMethods } from "../agent/held-calls.js";
import { agentStateMethods, type StateMethodName, type StateMethodTable } from "../agent/state-methods.js";
import { cronStateMethods } from "../agent/tools/cron/state.js";
import { memoryStateMethods } from "../agent/tools/memory/state.js";
import { skillsStateMethods } from "../agent/tools/skills/state.js";
import { taskBoardStateMethods } from "../agent/tools/task-board/state.js";

/** Argument schemas by method path (`searchSessions`, `cron.create`, …). */
export const stateMethods = {
  ...agentStateMethods,
  ...approvalStateMethods,
  ...cronStateMethods,
  ...memoryStateMethods,
  ...skillsStateMethods,
  ...delegateStateMethods,
  ...taskBoardStateMethods,
} satisfies StateMethodTable;

/** Whether `name` is a method of the table (an untrusted path from a request). */
export function isStateMethod(name: string): name is StateMethodName {
  return Object.hasOwn(stateMethods, name);
}
