/** The `code:` settings of `execute_code`: time limit, call budget and output cap. */
import { z } from "zod";
import { defineFeature } from "../../../core/settings.js";

/** The `code` section. */
export const codeSectionSchema = z
  .strictObject({
    timeoutS: z.number().int().positive().max(3600).default(300),
    maxToolCalls: z.number().int().positive().max(10_000).default(50),
    maxOutputChars: z.number().int().positive().max(1_000_000).default(20_000),
  })
  .prefault({});

/** The parsed `code` section. */
export type CodeSection = z.output<typeof codeSectionSchema>;

/** `execute_code`'s limits. */
export const codeSettings = defineFeature({
  key: "code",
  schema: codeSectionSchema,
  env: {
    HERALD_CODE_TIMEOUT_S: ["timeout_s", "int"],
    HERALD_CODE_MAX_TOOL_CALLS: ["max_tool_calls", "int"],
  },
  reference: {
    intro:
      "`execute_code` runs a Python or JavaScript script in the session's workspace (the sandbox by default) whose calls of Herald's tools come back over a Unix socket as ordinary tool calls.",
    rows: [
      [
        "timeout_s",
        "the longest a script may run (a call may ask for less); then it and its tool calls are killed",
      ],
      ["max_tool_calls", "tool calls one script may make"],
      ["max_output_chars", "characters kept of each of the script's stdout and stderr"],
    ],
  },
});
