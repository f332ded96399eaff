/**
 * `clarify`: the agent asks the user a question and ends its turn. The question is the turn's reply
 * (with its choices as buttons where the platform has them, numbered text elsewhere) and stays in the
 * session, so the user's answer, typed or clicked, starts the next turn with the question in context.
 * No slot is held while the user thinks.
 */
import { z } from "zod";
import { defineTool } from "../../tool-registry.js";

/** Most choices one question offers (a keyboard taller than this is a form, not a question). */
export const MAX_CHOICES = 10;

const parameters = z.object({
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
export const clarifyTool = defineTool({
  name: "clarify",
  description:
    "Ask the user a question when you cannot go on without their answer (an ambiguous request, a choice only they can make). Ends your turn: their answer starts your next one. Give `choices` when the answer is one of a few options.",
  parameters,
  toolset: "core",
  label: ({ question }) => `❓ ${question}`,
  async execute({ question, choices }, ctx) {
    // A scheduled run's reply goes to its targets, whose answers start other sessions: nobody to ask.
    if (ctx.origin.chat.platform === "cron")
      return {
        content:
          "error: nobody can answer in a scheduled run. Decide with what you have and say in your report what you assumed.",
        isError: true,
      };
    const unique = [...new Set(choices ?? [])];
    return {
      content:
        unique.length > 0
          ? `Asked the user (choices: ${unique.join(" | ")}). Their answer starts your next turn.`
          : "Asked the user. Their answer starts your next turn.",
      stopTurn: question,
      ...(unique.length > 0 ? { buttons: unique.map((choice) => [{ label: choice, data: choice }]) } : {}),
    };
  },
});
