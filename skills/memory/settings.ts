/** The `memory:` settings: the character budgets of MEMORY.md and USER.md, their env names and rows. */
import { z } from "zod";
import { defineFeature } from "../../core/settings.js";

/**
 * MEMORY.md and USER.md budgets in characters: the keys of the `memory:` section this folder owns
 * (external memory providers add `memory.providers` in agent/tools/memory-providers/settings.ts).
 */
export const memoryBudgetsShape = {
  memoryChars: z.number().int().positive().default(2200),
  userChars: z.number().int().positive().default(1375),
};

/** Memory's budgets. */
export const memorySettings = defineFeature({
  key: "memory",
  schema: z.strictObject(memoryBudgetsShape).prefault({}),
  env: {
    HERALD_MEMORY_CHARS: ["memory_chars", "int"],
    HERALD_USER_CHARS: ["user_chars", "int"],
  },
  reference: {
    rows: [
      [
        "memory_chars",
        "budget of `MEMORY.md`, per pair of files: the owners' `memories/`, and each other user's `memories/users/<platform>-<id>-<hash>/`",
      ],
      ["user_chars", "budget of `USER.md`, per pair of files likewise"],
    ],
  },
});
