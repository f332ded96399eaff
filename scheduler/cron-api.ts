/**
 * `CronStateApi` over the cron store: what the `cronjob` tool does. A caller (chat + user) sees and
 * changes only the jobs it created on its platform; a caller who is no owner makes jobs that deliver
 * only to its own chat (the owner policy, `deliveryRule`); a job names only toolsets its maker's chat
 * gets (`toolsetLimit`); every change is followed by `changed()`, which tells the scheduler and starts
 * queued runs.
 */
import type { DeliveryRule } from "../core/access.js";
import { parseChat } from "../core/chat.js";
import { HeraldError } from "../core/errors.js";
import type { ChatRef } from "../core/types.js";
import { buildSpec, jobView, newJobId } from "./jobs.js";
import { nextOccurrence } from "./schedule.js";
import type { SqliteCronStore } from "./sqlite-cron-store.js";
import { checkJobToolsets } from "./toolsets.js";
import type { CronCaller, CronJob, CronJobSpec, CronStateApi, ToolsetLimit } from "./types.js";

/** What the API needs of the cron service. */
export interface CronApiDeps {
  store: SqliteCronStore;
  /** The configured IANA zone. */
  timezone: string;
  now: () => number;
  /** Platform names targets may use (configurable ones and the running adapters). */
  knownPlatforms: () => ReadonlySet<string>;
  /** Called after every change; resolves when the scheduler knows. */
  changed: () => Promise<void>;
  /** The owner policy, asked for each target of a job made or changed. @defaultValue none: any target */
  deliveryRule?: DeliveryRule | undefined;
  /** Parses a chat string with the platforms' chat-id rules. @defaultValue `parseChat` */
  parseChat?: ((value: string) => ChatRef | undefined) | undefined;
  /** The toolsets a job's maker's chat gets; a job naming others is refused. @defaultValue none: any */
  toolsetLimit?: ToolsetLimit | undefined;
}

/** Builds the API the `cronjob` tool reaches through `StateClient.cron`. */
export function createCronApi(deps: CronApiDeps): CronStateApi {
  const { store } = deps;
  const isMine = (job: CronJob, caller: CronCaller) =>
    job.createdBy === caller.userId &&
    job.origin?.platform === caller.chat.platform &&
    (job.agent ?? undefined) === (caller.agent ?? undefined);
  const owned = (id: string, caller: CronCaller): CronJob => {
    const job = store.getJob(id);
    if (!job || !isMine(job, caller)) {
      throw new HeraldError(`There is no job ${id} of yours. List your jobs to see their ids.`, {
        code: "not_found",
      });
    }
    return job;
  };
  const parse = deps.parseChat ?? ((value: string) => parseChat(value));
  /**
   * Refuses a target the job's maker may not deliver to (as at each run: the maker in the job's origin
   * chat, whichever chat of theirs changes it); a home channel names no fixed chat.
   */
  const checkTargets = (spec: CronJobSpec, caller: CronCaller) => {
    const maker = spec.origin ? { chat: spec.origin, userId: spec.createdBy ?? caller.userId } : caller;
    for (const target of spec.deliver) {
      if (target === "local") continue;
      const to = target === "origin" ? spec.origin : target.includes(":") ? parse(target) : undefined;
      deps.deliveryRule?.checkDelivery(maker, target, to);
    }
  };
  const view = (id: string) => jobView(store.getJob(id)!, store.runs(id, 1)[0], deps.timezone);
  const ctx = (caller: CronCaller) => ({
    timezone: deps.timezone,
    now: deps.now(),
    origin: caller.chat,
    createdBy: caller.userId,
    originChatType: caller.chatType,
    agent: caller.agent,
    knownPlatforms: deps.knownPlatforms(),
  });
  return {
    async create(input, caller) {
      const c = ctx(caller);
      const spec = buildSpec(input, c);
      checkTargets(spec, caller);
      checkJobToolsets(spec, deps.toolsetLimit);
      const job = store.insertJob(newJobId(), spec, nextOccurrence(spec.schedule, c.now), c.now);
      await deps.changed();
      return view(job.id);
    },
    async list(caller) {
      return store
        .listJobs()
        .filter((j) => isMine(j, caller))
        .map((j) => view(j.id));
    },
    async update(id, patch, caller) {
      const job = owned(id, caller);
      const c = ctx(caller);
      const spec = buildSpec(patch, c, job);
      checkTargets(spec, caller);
      checkJobToolsets(spec, deps.toolsetLimit);
      const rescheduled = JSON.stringify(spec.schedule) !== JSON.stringify(job.schedule);
      store.updateSpec(id, spec, rescheduled ? nextOccurrence(spec.schedule, c.now) : job.nextRunAt, c.now);
      await deps.changed();
      return view(id);
    },
    async setPaused(id, paused, caller) {
      const job = owned(id, caller);
      const now = deps.now();
      // Resuming starts from now: ticks that passed while paused are not missed runs.
      store.setPaused(id, paused, paused ? job.nextRunAt : nextOccurrence(job.schedule, now), now);
      await deps.changed();
      return view(id);
    },
    async remove(id, caller) {
      owned(id, caller);
      store.deleteJob(id);
      await deps.changed();
    },
    async runNow(id, caller) {
      owned(id, caller);
      const now = deps.now();
      const run = store.addRun(id, now, "manual", now);
      await deps.changed();
      return { runId: run.id };
    },
  };
}
