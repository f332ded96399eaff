/**
 * Contracts of the scheduler: schedules, cron jobs and their runs, the `Scheduler` that turns schedules
 * into ticks (an in-process timer or BullMQ job schedulers), and the `CronStateApi` tools reach jobs
 * through. A tick is only a wake-up: the cron service claims the job's due tick in SQLite before a run
 * starts, so a tick delivered twice (restart, two processes) still runs once.
 */
import type { ChatRef, ChatType } from "../core/types.js";

/** When a job fires. Times are epoch ms. */
export type Schedule =
  /** A 5-field cron expression read in an IANA time zone (DST handled by croner). */
  | { kind: "cron"; expr: string; timezone: string }
  /** Every `everyMs`, on the grid `anchorAt + k·everyMs` (k ≥ 1). */
  | { kind: "every"; everyMs: number; anchorAt: number }
  /** Once, at `at`. */
  | { kind: "once"; at: number };

/**
 * What happens to a tick found late (the process was down): `auto` runs it once when it is late by at
 * most half the job's period, else waits for the next tick; `run` always runs it once; `skip` never
 * runs a late tick. Never more than one run, whatever the downtime.
 */
export type MissedRunPolicy = "auto" | "run" | "skip";

/** What a job is: everything its creator chose. JSON-serialisable. */
export interface CronJobSpec {
  name: string;
  prompt: string;
  schedule: Schedule;
  /**
   * Delivery targets as written: `origin`, `local`, `<platform>` (its home channel),
   * `<platform>:<chat>[:<thread>]`, `email:<address>`.
   */
  deliver: string[];
  /** The chat the job was created in (`origin` delivers there; failures are reported there). */
  origin?: ChatRef | undefined;
  /** User id of the creator on the origin's platform; runs act as this user. */
  createdBy?: string | undefined;
  /**
   * Whether the origin is a DM or a group: a run gets at most the toolsets a turn of that chat gets.
   * Absent in jobs of older builds (the gateway then decides by the chat's sessions).
   */
  originChatType?: ChatType | undefined;
  /**
   * The agent whose chat made the job (`agents:`): its runs are that agent's turns. Absent: the default
   * agent.
   */
  agent?: string | undefined;
  /** Skills the run should use (named in the run's input). */
  skills?: string[] | undefined;
  /** Toolsets of the run. @defaultValue the configured toolsets without "cron" */
  toolsets?: string[] | undefined;
  /** Model of the run. @defaultValue the configured model */
  model?: string | undefined;
  /** Run time limit. @defaultValue the service's (10 minutes) */
  timeoutMs?: number | undefined;
  /** @defaultValue "auto" */
  missedRuns?: MissedRunPolicy | undefined;
}

/** A stored job: its spec plus the state the service keeps. */
export interface CronJob extends CronJobSpec {
  id: string;
  createdAt: number;
  updatedAt: number;
  paused: boolean;
  /**
   * The next tick, the job's cursor: a tick is claimed by moving it past (compare-and-set), so no tick
   * runs twice. Undefined for a one-shot that has fired (the job is done).
   */
  nextRunAt?: number | undefined;
  /** The last tick claimed (run, missed or skipped). */
  lastTickAt?: number | undefined;
  /** Failed runs in a row. */
  failures: number;
  /** Ticks still to skip while backing off after failures. */
  skipTicks: number;
  /** Whether the current failure streak was reported to the user already. */
  failureReported: boolean;
  /** Targets whose unreachability was reported already (reported once, until they work again). */
  reportedTargets: string[];
}

/** `queued` → `running` → one of the final states. */
export type CronRunStatus = "queued" | "running" | "ok" | "silent" | "failed" | "timeout" | "cancelled";

/** One run of a job (one tick, or one "run now"). */
export interface CronRun {
  /** Deterministic from job, tick and kind; also the run's turn id. Colon-free. */
  id: string;
  jobId: string;
  /** The tick this run is for (for a manual run: when it was asked for). */
  tickAt: number;
  kind: "scheduled" | "manual";
  status: CronRunStatus;
  createdAt: number;
  startedAt?: number | undefined;
  finishedAt?: number | undefined;
  sessionKey?: string | undefined;
  /** The reply (cut to a few thousand characters). */
  output?: string | undefined;
  error?: string | undefined;
}

/** A tick the scheduler found due: job `jobId`'s occurrence at `tickAt`. */
export interface Tick {
  jobId: string;
  tickAt: number;
}

/**
 * Called for each due tick with the time it is handled at. May be called again for a tick already
 * handled (restart, a second process): the handler decides, idempotently. It should not throw; a
 * throw is logged by the scheduler and the tick is dropped.
 */
export type TickHandler = (tick: Tick, now: number) => Promise<void> | void;

/** What a scheduler is told about a job. */
export type ScheduledJob = Pick<CronJob, "id" | "schedule" | "paused" | "nextRunAt">;

/**
 * Turns schedules into ticks. `start` and `stop` are an idempotent pair; `upsert` and `remove` work
 * before `start` too. Implementations: `EmbeddedScheduler` (timer), `BullScheduler` (BullMQ job
 * schedulers: each tick reaches one process of any number).
 */
export interface Scheduler {
  /** Starts delivering ticks to `onTick`. */
  start(onTick: TickHandler): Promise<void>;
  /** Schedules a job from `job.nextRunAt` on, or unschedules it when paused or done. */
  upsert(job: ScheduledJob): Promise<void>;
  /** Unschedules a job; unknown ids are ignored. */
  remove(jobId: string): Promise<void>;
  /** What is scheduled now, soonest first. */
  list(): Promise<{ jobId: string; nextRunAt: number }[]>;
  stop(): Promise<void>;
  /** Delivers every tick due at `now` (tests drive time with it; the embedded timer calls it). */
  tick?(now: number): Promise<void>;
}

/** What a user gives to create a job (tool arguments, CLI options). Strings as a person writes them. */
export interface CronJobInput {
  /** `0 8 * * 1-5`, `every 2h`, `30m`, `in 20m`, `2025-06-01T08:00`. */
  schedule: string;
  prompt: string;
  /** Comma list of targets. @defaultValue "origin" (the tool), required on the CLI */
  deliver?: string | undefined;
  name?: string | undefined;
  /** IANA zone of a cron expression or a date-time without offset. @defaultValue the configured one */
  timezone?: string | undefined;
  skills?: string[] | undefined;
  toolsets?: string[] | undefined;
  model?: string | undefined;
  timeoutMinutes?: number | undefined;
  missedRuns?: MissedRunPolicy | undefined;
}

/** Who asks: the chat a tool runs in and its user. A caller sees and changes only its own jobs. */
export interface CronCaller {
  chat: ChatRef;
  userId: string;
  /** The chat's type: the toolsets a job made here may name are that chat's. */
  chatType?: ChatType | undefined;
  /** The agent the chat talks to; its jobs are that agent's. Absent: the default agent. */
  agent?: string | undefined;
}

/** The maker of a job as the toolset limit sees it: its origin chat, user and the chat's type. */
export interface JobMaker {
  chat: ChatRef;
  userId: string;
  chatType: ChatType | undefined;
}

/**
 * The toolsets a turn of the maker's chat gets (its platform, chat type and owner rights): a job's runs
 * get at most these. Must not throw.
 */
export type ToolsetLimit = (maker: JobMaker) => readonly string[];

/** A job as tools and the CLI show it. */
export interface CronJobView {
  id: string;
  name: string;
  /** The schedule in words: `cron 0 8 * * 1-5 (Europe/Berlin)`, `every 2h`, `once at 2025-06-01 08:00 UTC`. */
  schedule: string;
  deliver: string;
  prompt: string;
  state: "active" | "paused" | "done";
  nextRunAt?: number | undefined;
  /** The zone times of this job read best in: a cron job's own, else the configured one. */
  timezone: string;
  failures: number;
  lastRun?: Pick<CronRun, "status" | "tickAt" | "startedAt" | "finishedAt" | "error"> | undefined;
}

/**
 * What the `cronjob` tool needs of the scheduler (a `StateClient` member). Methods reject with a
 * HeraldError (`invalid_input`, `not_found`) whose message says what is wrong and how to fix it.
 */
export interface CronStateApi {
  create(input: CronJobInput, caller: CronCaller): Promise<CronJobView>;
  list(caller: CronCaller): Promise<CronJobView[]>;
  update(id: string, patch: Partial<CronJobInput>, caller: CronCaller): Promise<CronJobView>;
  setPaused(id: string, paused: boolean, caller: CronCaller): Promise<CronJobView>;
  remove(id: string, caller: CronCaller): Promise<void>;
  /** Queues a run now (outside the schedule); resolves with the run's id. */
  runNow(id: string, caller: CronCaller): Promise<{ runId: string }>;
}
