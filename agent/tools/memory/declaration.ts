/** The `memory` tool's declaration; its implementation (`impl.ts`) loads on its first call. */

import { z } from "zod";
import { declareTool } from "../../tool-declaration.js";

/** `memory`'s arguments. */
export const memoryParameters = z.object({
  action: z
    .enum(["add", "replace", "remove"])
    .describe("add a new entry, replace the entry containing old_text, or remove it."),
  // What each file holds is in the tool's description: said once.
  target: z.enum(["memory", "user"]),
  content: z.string().optional().describe("The entry's text (add, replace): one self-contained fact."),
  old_text: z
    .string()
    .optional()
    .describe("replace, remove: a short piece of the existing entry, unique to it, copied exactly."),
});

/** The `memory` tool (toolset "memory"). */
export const memoryTool = declareTool({
  name: "memory",
  description:
    "Save durable knowledge for future sessions: facts about the user (preferences, name, projects) in 'user', and lessons about your environment, tools and what worked in 'memory'. Save what will still matter next week, not task progress. Each file has a character budget; when one is full, consolidate with replace/remove. Never save secrets.",
  parameters: memoryParameters,
  toolset: "memory",
  implementation: () => import("./impl.js").then((m) => m.runMemory),
});
