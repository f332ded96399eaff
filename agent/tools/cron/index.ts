/**
 * `cronjob`: lets a user schedule work in plain words ("every weekday at 8 send me the build failures",
 * "remind me in 20 minutes"). The model turns the request into a schedule and a self-contained prompt;
 * the job's runs report to this chat unless told otherwise. A user sees and changes only their own jobs.
 */
import { z } from "zod";
import { callerOfOrigin } from "../../../core/access.js";
import { formatDuration, formatTime } from "../../../scheduler/index.js";
import type { CronCaller, CronJobInput, CronJobView } from "../../../scheduler/types.js";
import { defineTool } from "../../tool-registry.js";

const parameters = z.object({
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

type Args = z.infer<typeof parameters>;

/** The `cronjob` tool (toolset "cron"). */
export const cronjobTool = defineTool({
  name: "cronjob",
  description:
    "Schedule work that runs later or repeatedly and reports to a chat: reminders, daily summaries, periodic checks. Also lists, changes, pauses, resumes, removes or runs now the user's scheduled jobs.",
  parameters,
  toolset: "cron",
  async execute(args, ctx) {
    const cron = ctx.state.cron;
    if (!cron) return { content: "error: scheduling is not available in this gateway.", isError: true };
    const caller: CronCaller = { ...callerOfOrigin(ctx.origin), chatType: ctx.origin.chatType };
    if (caller.chat.platform === "cron") {
      return { content: "error: a scheduled run can't manage scheduled jobs.", isError: true };
    }
    if (args.action === "list") {
      const jobs = await cron.list(caller);
      return jobs.length ? jobs.map(describeJob).join("\n") : "No scheduled jobs.";
    }
    if (args.action === "create") {
      if (!args.schedule || !args.prompt) {
        return { content: "error: create needs both schedule and prompt.", isError: true };
      }
      const job = await cron.create(
        { ...inputOf(args), schedule: args.schedule, prompt: args.prompt },
        caller,
      );
      ctx.progress(`scheduled "${job.name}"`);
      return `Created job ${describeJob(job)}`;
    }
    if (!args.id)
      return { content: `error: ${args.action} needs the job id (list shows them).`, isError: true };
    switch (args.action) {
      case "update":
        return `Updated job ${describeJob(await cron.update(args.id, inputOf(args), caller))}`;
      case "pause":
        return `Paused job ${describeJob(await cron.setPaused(args.id, true, caller))}`;
      case "resume":
        return `Resumed job ${describeJob(await cron.setPaused(args.id, false, caller))}`;
      case "remove":
        await cron.remove(args.id, caller);
        return `Removed job ${args.id}.`;
      case "run": {
        const { runId } = await cron.runNow(args.id, caller);
        return `Job ${args.id} is running now (run ${runId}); its result goes to its targets.`;
      }
    }
  },
});

function inputOf(args: Args): Partial<CronJobInput> {
  const input: Partial<CronJobInput> = {
    schedule: args.schedule,
    prompt: args.prompt,
    deliver: args.deliver,
    name: args.name,
    timezone: args.timezone,
    skills: args.skills,
    toolsets: args.toolsets,
    model: args.model,
    timeoutMinutes: args.timeout_minutes,
    missedRuns: args.missed_runs,
  };
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
}

/** `j1a2b "Build report": cron 0 8 * * 1-5 (Europe/Berlin) → origin; next run 2025-06-02 08:00 Europe/Berlin (in 9h 12m)`. */
function describeJob(job: CronJobView): string {
  const now = Date.now();
  const next =
    job.state === "active" && job.nextRunAt !== undefined
      ? `next run ${formatTime(job.nextRunAt, job.timezone)} (in ${formatDuration(Math.max(0, job.nextRunAt - now))})`
      : job.state;
  const last = job.lastRun
    ? `; last run ${job.lastRun.status}${job.lastRun.error ? `: ${job.lastRun.error}` : ""}`
    : "";
  return `${job.id} "${job.name}": ${job.schedule} → ${job.deliver}; ${next}${last}`;
}

export { cronStateMethods } from "./state.js";
