/** The `session_search` tool's declaration; its implementation (`impl.ts`) loads on its first call. */

import { z } from "zod";
import { declareTool } from "../../tool-declaration.js";

/** `session_search`'s arguments. */
export const sessionSearchParameters = z.object({
  query: z
    .string()
    .trim()
    .min(1)
    .describe("What to look for in earlier conversations: keywords, or what it was about in your own words."),
  limit: z.number().int().min(1).max(20).optional().describe("Most results to return (default 8)."),
});

/** The `session_search` tool (toolset "core"). */
export const sessionSearchTool = declareTool({
  name: "session_search",
  description:
    "Search the user's earlier conversations with you (not the current one), by keywords and, where configured, by meaning. Use it when the user refers to something discussed before.",
  parameters: sessionSearchParameters,
  toolset: "core",
  implementation: () => import("./impl.js").then((m) => m.runSessionSearch),
});
