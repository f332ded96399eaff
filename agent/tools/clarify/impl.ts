/** What `clarify` does (`declaration.ts` declares it). */
import type { ToolRun } from "../../tool-declaration.js";
import type { clarifyParameters } from "./declaration.js";

/** Runs one `clarify` call. */
export const runClarify: ToolRun<typeof clarifyParameters> = async ({ question, choices }, ctx) => {
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
};
