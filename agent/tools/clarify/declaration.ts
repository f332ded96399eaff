/** The `clarify` tool's declaration; its implementation (`impl.ts`) loads on its first call. */

import { z } from "zod";
import { declareTool } from "../../tool-declaration.js";

/** Most choices one question offers (a keyboard taller than this is a form, not a question). */
export const MAX_CHOICES = 10;

/** `clarify`'s arguments. */
export const clarifyParameters = z.object({
  question: z.string().trim().min(1).max(2000).describe("The question, as the user should read it."),
  choices: z
    .array(
      z
        .string()
        .trim()
        .min(1)
        .max(200)
        // A click sends the choice as the user's message: a leading "/" would make it a command.
        .refine((c) => !c.startsWith("/"), "a choice may not start with / (a click would send a command)"),
    )
    .max(MAX_CHOICES)
    .optional()
    .describe(
      `Up to ${MAX_CHOICES} short answers to pick from; the user may still answer in their own words.`,
    ),
});

/** The `clarify` tool (toolset "core"). */
export const clarifyTool = declareTool({
  name: "clarify",
  description:
    "Ask the user a question when you cannot go on without their answer (an ambiguous request, a choice only they can make). Ends your turn: their answer starts your next one. Give `choices` when the answer is one of a few options.",
  parameters: clarifyParameters,
  toolset: "core",
  label: ({ question }) => `❓ ${question}`,
  implementation: () => import("./impl.js").then((m) => m.runClarify),
});
