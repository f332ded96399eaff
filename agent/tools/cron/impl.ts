/** What `cronjob` does (`declaration.ts` declares it). */
import type { z } from "zod";
import { callerOfOrigin } from "../../../core/access.js";
import { formatDuration, formatTime } from "../../../scheduler/index.js";
import type { CronCaller, CronJobInput, CronJobView } from "../../../scheduler/types.js";
import type { ToolRun } from "../../tool-declaration.js";
import type { cronjobParameters } from "./declaration.js";

type Args = z.infer<typeof cronjobParameters>;

/** Runs one `cronjob` call. */
export const runCronjob: ToolRun<typeof cronjobParameters> = async (args, ctx) => {
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
    const job = await cron.create({ ...inputOf(args), schedule: args.schedule, prompt: args.prompt }, caller);
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
};

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
