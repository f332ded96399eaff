/** The `delegation:` settings of `delegate_task` (children on the job queue): the section, env names, rows. */
import { z } from "zod";
import { defineFeature } from "../../core/settings.js";

/** Delegation's limits. */
export const delegationSettings = defineFeature({
  key: "delegation",
  schema: z
    .strictObject({
      /** Depth past which children get no `delegate_task` (the chat's turn is depth 0). */
      maxDepth: z.number().int().min(1).max(5).default(2),
      /** Children of one call running at once (a call may ask for fewer). */
      maxParallel: z.number().int().min(1).max(20).default(3),
      /** Step cap of a child turn. */
      maxIterations: z.number().int().positive().default(20),
      /** Time budget of a child from its start, in seconds. */
      timeoutS: z.number().int().positive().default(600),
    })
    .prefault({}),
  env: {
    HERALD_DELEGATE_MAX_DEPTH: ["max_depth", "int"],
    HERALD_DELEGATE_MAX_PARALLEL: ["max_parallel", "int"],
    HERALD_DELEGATE_MAX_ITERATIONS: ["max_iterations", "int"],
    HERALD_DELEGATE_TIMEOUT_S: ["timeout_s", "int"],
  },
  reference: {
    rows: [
      ["max_depth", "depth past which children get no `delegate_task` (the chat's turn is 0)"],
      ["max_parallel", "children of one call running at once"],
      ["max_iterations", "step cap of a child"],
      ["timeout_s", "a child's time budget from its start"],
    ],
  },
});
