/** The `checkpoints:` settings: on or off, and the bounds of what a workspace's checkpoints hold. */
import { z } from "zod";
import { defineFeature } from "../../../core/settings.js";
import { DEFAULT_CHECKPOINT_LIMITS as D } from "./types.js";

/** The `checkpoints` section. */
export const checkpointsSectionSchema = z
  .strictObject({
    /** Snapshot the workspace before a turn's first change of it. */
    enabled: z.boolean().default(true),
    maxCount: z.number().int().min(1).max(1000).default(D.maxCount),
    maxFileBytes: z.number().int().positive().default(D.maxFileBytes),
    maxTotalBytes: z.number().int().positive().default(D.maxTotalBytes),
    maxFiles: z.number().int().positive().default(D.maxFiles),
  })
  .prefault({});

/** The parsed `checkpoints` section. */
export type CheckpointsSection = z.output<typeof checkpointsSectionSchema>;

/** Checkpoints of the agent's workspace. */
export const checkpointsSettings = defineFeature({
  key: "checkpoints",
  schema: checkpointsSectionSchema,
  env: {
    HERALD_CHECKPOINTS_ENABLED: ["enabled", "bool"],
    HERALD_CHECKPOINTS_MAX_COUNT: ["max_count", "int"],
    HERALD_CHECKPOINTS_MAX_FILE_BYTES: ["max_file_bytes", "int"],
    HERALD_CHECKPOINTS_MAX_TOTAL_BYTES: ["max_total_bytes", "int"],
    HERALD_CHECKPOINTS_MAX_FILES: ["max_files", "int"],
  },
  reference: {
    intro:
      "Before a turn's first change of its workspace (a file tool's write or patch, a command, a script), the workspace is saved as a checkpoint in a git repository outside it, `HERALD_HOME/checkpoints/`; `/checkpoints`, `/diff` and `/rollback` use them. Workspaces on this host only (`exec.backend` `sandbox` or `local`). See [Checkpoints](checkpoints.md).",
    rows: [
      ["enabled", "take checkpoints (the commands say when they are off)"],
      ["max_count", "checkpoints kept per workspace; the oldest go first"],
      [
        "max_file_bytes",
        "files larger than this are left out of checkpoints; a rollback neither deletes nor restores them",
        "`10485760` (10 MiB)",
      ],
      [
        "max_total_bytes",
        "a workspace whose other files add up to more gets no checkpoint (the chat is told)",
        "`524288000` (500 MiB)",
      ],
      ["max_files", "a workspace with more files gets no checkpoint (the chat is told)"],
    ],
  },
});
