/**
 * The `memory` member of the `StateClient`: MEMORY.md and USER.md as the `memory` tool reaches them,
 * with the argument schemas of its methods for the gateway's state API.
 */
import { z } from "zod";
import type { MemoryStateApi } from "../../../skills/memory/types.js";
import { callerSchema, type MethodsOf, type StateMethodSchemas } from "../../state-methods.js";

declare module "../../types.js" {
  interface StateClient {
    /** MEMORY.md and USER.md (the `memory` tool); absent where memory is not reachable. */
    memory?: MemoryStateApi | undefined;
  }
}

const memoryTarget = z.enum(["memory", "user"]);

/** The argument schemas of the `memory` member. */
export const memoryStateMethods = {
  "memory.read": z.tuple([memoryTarget, callerSchema]),
  "memory.add": z.tuple([memoryTarget, z.string(), callerSchema]),
  "memory.replace": z.tuple([memoryTarget, z.string(), z.string(), callerSchema]),
  "memory.remove": z.tuple([memoryTarget, z.string(), callerSchema]),
} satisfies StateMethodSchemas<MethodsOf<"memory">>;
