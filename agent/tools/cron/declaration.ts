/** The `cronjob` tool's declaration; its implementation (`impl.ts`) loads on its first call. */

import { z } from "zod";
import { declareTool } from "../../tool-declaration.js";

/** `cronjob`'s arguments. */
export const cronjobParameters = z.object({
  action: z
    .enum(["create", "list", "update", "pause", "resume", "remove", "run"])
    .describe("create a job, list this user's jobs, change one, pause/resume it, remove it, or run it now."),
  id: z
    .string()
    .trim()
    .min(1)
    .optional()
    .describe("The job id (from create or list); needed except for create and list."),
  schedule: z
    .string()
    .optional()
    .describe(
      'When it runs: a 5-field cron expression ("0 8 * * 1-5" = weekdays 08:00), an interval ("30m", "every 2h"), a delay ("in 20m") or a date-time ("2025-06-01T08:00").',
    ),
  prompt: z
    .string()
    .optional()
    .describe(
      "What to do on each run, written as a complete instruction to yourself: the run starts a fresh conversation without this chat's context. For 'only tell me if...' jobs, end with: If there is nothing to report, reply exactly [SILENT].",
    ),
  deliver: z
    .string()
    .optional()
    .describe(
      "Where the result goes (default origin = this chat): origin, local (keep only), a platform name (its home channel, set with /sethome), platform:chat_id, email:address, or a comma list.",
    ),
  name: z.string().optional().describe("A short name for the job."),
  timezone: z
    .string()
    .optional()
    .describe("IANA time zone for a cron expression or date-time (default: the configured one)."),
  skills: z.array(z.string()).optional().describe("Skills each run should use."),
  toolsets: z
    .array(z.string())
    .optional()
    .describe("Toolsets each run may use (default: the standard ones)."),
  model: z.string().optional().describe("A different model for the runs."),
  timeout_minutes: z.number().positive().optional().describe("Stop a run after this long (default 10)."),
  missed_runs: z
    .enum(["auto", "run", "skip"])
    .optional()
    .describe("After downtime: auto (run once if not too late), run (always once), skip."),
});

/** The `cronjob` tool (toolset "cron"). */
export const cronjobTool = declareTool({
  name: "cronjob",
  description:
    "Schedule work that runs later or repeatedly and reports to a chat: reminders, daily summaries, periodic checks. Also lists, changes, pauses, resumes, removes or runs now the user's scheduled jobs.",
  parameters: cronjobParameters,
  toolset: "cron",
  implementation: () => import("./impl.js").then((m) => m.runCronjob),
});
