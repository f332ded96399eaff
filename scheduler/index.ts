/**
 * Cron: schedules (cron expressions, intervals, one-shot times), the job store on the gateway's state
 * file, the service that fires due jobs as turns through `TurnControl` and reports their runs, delivery
 * targets and home channels, and the scheduler under it (in-process timer, or BullMQ job schedulers on
 * Redis). `gateway.ts` builds the service on the gateway's runner.
 */
export { createScheduler } from "./create.js";
export { CronService, type CronServiceOptions, skipTicksAfter } from "./cron-service.js";
export {
  type CronConfig,
  type CronGateway,
  type CronPorts,
  type CronTuning,
  createCronService,
} from "./gateway.js";
export { HOME_CHANNELS_NAMESPACE, HomeChannels, setHomeCommand } from "./home-channels.js";
export { buildSpec, formatJobLine, formatRunLine, jobView, newJobId, originText } from "./jobs.js";
export { describeSchedule, formatDuration, formatTime, nextOccurrence, parseSchedule } from "./schedule.js";
export { SqliteCronStore } from "./sqlite-cron-store.js";
export {
  type ParseTargetsOptions,
  parseTargets,
  type ResolvedTargets,
  resolveTargets,
  type TargetEnvironment,
} from "./targets.js";
export type * from "./types.js";
