/**
 * Job specs from what people write (tool arguments, CLI options): validated once here, for the tool
 * and the CLI alike, plus the views and text lines both show.
 */
import { randomBytes } from "node:crypto";
import { formatChat } from "../core/chat.js";
import { HeraldError } from "../core/errors.js";
import type { ChatRef, ChatType } from "../core/types.js";
import { describeSchedule, formatDuration, formatTime, parseSchedule } from "./schedule.js";
import { parseTargets } from "./targets.js";
import type { CronJob, CronJobInput, CronJobSpec, CronJobView, CronRun, MissedRunPolicy } from "./types.js";

/** The longest run time limit a job may ask for. */
const MAX_TIMEOUT_MINUTES = 24 * 60;
const MISSED_POLICIES: readonly MissedRunPolicy[] = ["auto", "run", "skip"];

/** What building a spec needs besides the input. */
export interface SpecContext {
  /** The configured IANA zone (cron expressions and date-times without an offset). */
  timezone: string;
  now: number;
  /** The creating chat and user (absent on the CLI). */
  origin?: ChatRef | undefined;
  createdBy?: string | undefined;
  /** The creating chat's type. */
  originChatType?: ChatType | undefined;
  /** The creating chat's agent. */
  agent?: string | undefined;
  /** Platform names targets may use; absent: any well-formed name. */
  knownPlatforms?: ReadonlySet<string> | undefined;
}

function invalid(message: string): HeraldError {
  return new HeraldError(message, { code: "invalid_input" });
}

/** A new job id: short, colon-free, unguessable enough that ids don't collide. */
export function newJobId(): string {
  return `j${randomBytes(5).toString("hex")}`;
}

function cleanList(values: string[] | undefined, what: string): string[] | undefined {
  if (values === undefined) return undefined;
  const out = [...new Set(values.map((v) => v.trim()).filter(Boolean))];
  for (const v of out) if (!/^[\w.-]+$/.test(v)) throw invalid(`"${v}" is not a valid ${what} name.`);
  return out.length ? out : undefined;
}

/**
 * Builds a job spec from input, or patches `base` with it. Validates the schedule, the targets, the
 * time limit and the missed-run policy.
 * @throws HeraldError `invalid_input` saying what is wrong and how to write it.
 */
export function buildSpec(input: Partial<CronJobInput>, ctx: SpecContext, base?: CronJobSpec): CronJobSpec {
  const origin = base ? base.origin : ctx.origin;
  const prompt = input.prompt?.trim() ?? base?.prompt;
  if (!prompt) throw invalid("The job needs a prompt: what should I do each time it runs?");
  if (prompt.length > 10_000) throw invalid("The prompt is longer than 10,000 characters; shorten it.");

  let schedule = base?.schedule;
  if (input.schedule !== undefined || input.timezone !== undefined || !schedule) {
    const text =
      input.schedule ?? (base?.schedule.kind === "cron" ? base.schedule.expr : base ? undefined : "");
    if (text === undefined) {
      throw invalid(
        "To change the time zone, give the schedule again too (it applies to cron expressions and dates).",
      );
    }
    schedule = parseSchedule(text, { timezone: input.timezone?.trim() || ctx.timezone, now: ctx.now });
  }

  const deliverText = input.deliver ?? (base ? base.deliver.join(",") : "origin");
  const deliver = parseTargets(deliverText, {
    hasOrigin: origin !== undefined,
    knownPlatforms: ctx.knownPlatforms,
  });

  const timeoutMinutes = input.timeoutMinutes;
  if (timeoutMinutes !== undefined && !(timeoutMinutes >= 1 && timeoutMinutes <= MAX_TIMEOUT_MINUTES)) {
    throw invalid(`The run time limit must be between 1 and ${MAX_TIMEOUT_MINUTES} minutes.`);
  }
  const missedRuns = input.missedRuns ?? base?.missedRuns;
  if (missedRuns !== undefined && !MISSED_POLICIES.includes(missedRuns)) {
    throw invalid(`missed runs must be one of ${MISSED_POLICIES.join(", ")}.`);
  }
  const name = input.name?.trim() || base?.name || defaultName(prompt);
  return {
    name: name.slice(0, 80),
    prompt,
    schedule,
    deliver,
    origin,
    createdBy: base ? base.createdBy : ctx.createdBy,
    originChatType: base ? base.originChatType : ctx.originChatType,
    agent: base ? base.agent : ctx.agent,
    skills: input.skills !== undefined ? cleanList(input.skills, "skill") : base?.skills,
    toolsets: input.toolsets !== undefined ? cleanList(input.toolsets, "toolset") : base?.toolsets,
    model: input.model !== undefined ? input.model.trim() || undefined : base?.model,
    timeoutMs: timeoutMinutes !== undefined ? Math.round(timeoutMinutes * 60_000) : base?.timeoutMs,
    missedRuns,
  };
}

/** The first words of the prompt, as a name when none is given. */
function defaultName(prompt: string): string {
  const words = prompt.replace(/\s+/g, " ").split(" ").slice(0, 6).join(" ");
  return words.length < prompt.length ? `${words}…` : words;
}

/** A job as tools and the CLI show it; `timezone` is the configured zone. */
export function jobView(job: CronJob, lastRun: CronRun | undefined, timezone: string): CronJobView {
  const zone = job.schedule.kind === "cron" ? job.schedule.timezone : timezone;
  return {
    id: job.id,
    name: job.name,
    schedule: describeSchedule(job.schedule, zone),
    timezone: zone,
    deliver: job.deliver.join(","),
    prompt: job.prompt,
    state: job.paused ? "paused" : job.nextRunAt === undefined ? "done" : "active",
    nextRunAt: job.nextRunAt,
    failures: job.failures,
    lastRun: lastRun && {
      status: lastRun.status,
      tickAt: lastRun.tickAt,
      startedAt: lastRun.startedAt,
      finishedAt: lastRun.finishedAt,
      error: lastRun.error,
    },
  };
}

/** One line per job: `j1a2b3c4d5  every 2h  → telegram  next 2025-06-01 08:00 UTC  "Status page"`. */
export function formatJobLine(view: CronJobView): string {
  const next =
    view.state === "active" && view.nextRunAt !== undefined
      ? `next ${formatTime(view.nextRunAt, view.timezone)}`
      : view.state;
  const failing = view.failures ? `  (failing: ${view.failures} in a row)` : "";
  return `${view.id}  ${view.schedule}  → ${view.deliver}  ${next}  "${view.name}"${failing}`;
}

/** One line per run: `2025-06-01 08:00 UTC  ok  12s  Build is green…`. */
export function formatRunLine(run: CronRun, timezone: string): string {
  const when = formatTime(run.startedAt ?? run.tickAt, timezone);
  const took =
    run.startedAt !== undefined && run.finishedAt !== undefined
      ? run.finishedAt - run.startedAt < 60_000
        ? `${Math.round((run.finishedAt - run.startedAt) / 1000)}s`
        : formatDuration(run.finishedAt - run.startedAt)
      : "-";
  const detail = (run.error ?? run.output ?? "").replace(/\s+/g, " ").trim();
  const cut = detail.length > 100 ? `${detail.slice(0, 100)}…` : detail;
  return `${when}  ${run.kind === "manual" ? "manual " : ""}${run.status}  ${took}${cut ? `  ${cut}` : ""}`;
}

/** The chat string of an origin, for lists. */
export function originText(job: CronJob): string {
  return job.origin ? formatChat(job.origin) : "cli";
}
