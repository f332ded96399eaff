/** The `task_board:` settings of the shared task board (`task_board`, `herald tasks`). */
import { z } from "zod";
import { defineFeature } from "../../../core/settings.js";

/** The task board's claims. */
export const taskBoardSettings = defineFeature({
  key: "taskBoard",
  schema: z
    .strictObject({
      /** How long a claim holds without its turn calling the board again, in seconds. */
      claimTtlS: z.number().int().positive().default(900),
    })
    .prefault({}),
  env: { HERALD_TASK_CLAIM_TTL_S: ["claim_ttl_s", "int"] },
  reference: {
    rows: [["claim_ttl_s", "a claim holds this long without its turn using the board"]],
  },
});
