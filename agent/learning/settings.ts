/**
 * The `learning:` settings of the learning loop (agent/review.ts: a background review after busy turns
 * and at session reset) and of the skills curator; their env names and reference rows.
 */
import { z } from "zod";
import { defineFeature } from "../../core/settings.js";

/** The learning loop. */
export const learningSettings = defineFeature({
  key: "learning",
  schema: z
    .strictObject({
      enabled: z.boolean().default(true),
      /** A turn with at least this many tool calls is reviewed. */
      toolCallThreshold: z.number().int().positive().default(5),
      /** An ended session is reviewed when it has at least this many unreviewed user messages. */
      resetMinTurns: z.number().int().positive().default(4),
      /** The review's model. @defaultValue model.name */
      model: z.string().min(1).optional(),
      maxIterations: z.number().int().positive().default(8),
      /** Run the skills curator once a week in the gateway. */
      curateWeekly: z.boolean().default(false),
      /** The curator archives user skills unused for this long. */
      archiveAfterDays: z.number().int().positive().default(90),
    })
    .prefault({}),
  env: {
    HERALD_LEARNING_ENABLED: ["enabled", "bool"],
    HERALD_LEARNING_TOOL_CALL_THRESHOLD: ["tool_call_threshold", "int"],
    HERALD_LEARNING_RESET_MIN_TURNS: ["reset_min_turns", "int"],
    HERALD_LEARNING_MODEL: ["model", "string"],
    HERALD_LEARNING_MAX_ITERATIONS: ["max_iterations", "int"],
    HERALD_SKILLS_CURATE_WEEKLY: ["curate_weekly", "bool"],
    HERALD_SKILLS_ARCHIVE_AFTER_DAYS: ["archive_after_days", "int"],
  },
  reference: {
    rows: [
      [
        "enabled",
        "background reviews after busy turns and at session end, written to the memory of whom the reviewed turn acts for (a conversation several people share never into the owners')",
      ],
      ["tool_call_threshold", "a turn with this many tool calls is reviewed"],
      ["reset_min_turns", "an ended session with this many unreviewed user messages is reviewed"],
      ["model", "the review's model (`auxiliary.review` wins)", "the default model"],
      ["max_iterations", "the review's step cap"],
      ["curate_weekly", "run the skills curator once a week in the gateway"],
      ["archive_after_days", "the curator archives user skills unused this long"],
    ],
  },
});
