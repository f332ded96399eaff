/**
 * Every `StateClient` method a remote worker may call, with its argument schemas: the agent's own
 * members and each feature's, as each declares them beside its member. The type check holds the table
 * against the `StateClient` (every member merged in included): a member left out here fails it. The
 * HTTP client builds its members from this table and the gateway's state API validates calls with it.
 */
import { delegateStateMethods } from "../agent/delegate/index.js";
import {
  agentStateMethods,
  approvalStateMethods,
  type StateMethodName,
  type StateMethodTable,
} from "../agent/index.js";
import { cronStateMethods } from "../agent/tools/cron/index.js";
import { mcpToolsStateMethods } from "../agent/tools/mcp/index.js";
import { memoryStateMethods } from "../agent/tools/memory/index.js";
import { memoryProvidersStateMethods } from "../agent/tools/memory-providers/index.js";
import { skillsStateMethods } from "../agent/tools/skills/index.js";
import { taskBoardStateMethods } from "../agent/tools/task-board/index.js";

/** Argument schemas by method path (`searchSessions`, `cron.create`, …). */
export const stateMethods = {
  ...agentStateMethods,
  ...approvalStateMethods,
  ...cronStateMethods,
  ...memoryStateMethods,
  ...memoryProvidersStateMethods,
  ...mcpToolsStateMethods,
  ...skillsStateMethods,
  ...delegateStateMethods,
  ...taskBoardStateMethods,
} satisfies StateMethodTable;

/** Whether `name` is a method of the table (an untrusted path from a request). */
export function isStateMethod(name: string): name is StateMethodName {
  return Object.hasOwn(stateMethods, name);
}
