/**
 * `CronStateApi` over the cron store: what the `cronjob` tool does. A caller (chat + user) sees and
 * changes only the jobs it created on its platform; every change is followed by `changed()`, which
 * tells the scheduler and starts queued runs.
 */
import { HeraldError } from "../core/errors.js";
import { buildSpec, jobView, newJobId } from "./jobs.js";
import { nextOccurrence } from "./schedule.js";
import type { SqliteCronStore } from "./sqlite-cron-store.js";
import type { CronCaller, CronJob, CronStateApi } from "./types.js";

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
}

/** Builds the API the `cronjob` tool reaches through `StateClient.cron`. */
export function createCronApi(deps: CronApiDeps): CronStateApi {
  const { store } = deps;
  const isOwner = (job: CronJob, caller: CronCaller) =>
    job.createdBy === caller.userId && job.origin?.platform === caller.chat.platform;
  const owned = (id: string, caller: CronCaller): CronJob => {
    const job = store.getJob(id);
    if (!job || !isOwner(job, caller)) {
      throw new HeraldError(`There is no job ${id} of yours. List your jobs to see their ids.`, {
        code: "not_found",
      });
    }
    return job;
  };
  const view = (id: string) => jobView(store.getJob(id)!, store.runs(id, 1)[0], deps.timezone);
  const ctx = (caller: CronCaller) => ({
    timezone: deps.timezone,
    now: deps.now(),
    origin: caller.chat,
    createdBy: caller.userId,
    knownPlatforms: deps.knownPlatforms(),
  });
  return {
    async create(input, caller) {
      const c = ctx(caller);
      const spec = buildSpec(input, c);
      const job = store.insertJob(newJobId(), spec, nextOccurrence(spec.schedule, c.now), c.now);
      await deps.changed();
      return view(job.id);
    },
    async list(caller) {
      return store
        .listJobs()
        .filter((j) => isOwner(j, caller))
        .map((j) => view(j.id));
    },
    async update(id, patch, caller) {
      const job = owned(id, caller);
      const c = ctx(caller);
      const spec = buildSpec(patch, c, job);
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
