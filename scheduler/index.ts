/**
 * Builds the scheduler the configuration asks for (BullMQ job schedulers with `REDIS_URL`, else the
 * in-process timer) and the cron service around it, with `/sethome` registered on the runner.
 */
import type Database from "better-sqlite3";
import type { HeraldConfig } from "../app/config.js";
import type { Logger } from "../core/logger.js";
import type { GatewayRunner } from "../gateway/runner.js";
import { CronService, type CronServiceOptions } from "./cron-service.js";
import { EmbeddedScheduler } from "./embedded-scheduler.js";
import {
  configuredHomeChannel,
  HOME_CHANNELS_NAMESPACE,
  HomeChannels,
  registerSetHomeCommand,
} from "./home-channels.js";
import { SqliteCronStore } from "./sqlite-cron-store.js";
import type { Scheduler } from "./types.js";

export { CronService } from "./cron-service.js";
export { SqliteCronStore } from "./sqlite-cron-store.js";
export type * from "./types.js";

/** The configured scheduler: `BullScheduler` when `queue.redisUrl` is set, else `EmbeddedScheduler`. */
export function createScheduler(config: Pick<HeraldConfig, "queue">, logger: Logger): Scheduler {
  const { redisUrl, prefix } = config.queue;
  return redisUrl
    ? lazyBullScheduler({ logger, connection: redisUrl, prefix })
    : new EmbeddedScheduler({ logger });
}

/**
 * The BullMQ scheduler, loaded on first use: bullmq and ioredis cost ~20 MB of memory and start-up
 * time that a gateway on the embedded default never needs.
 */
function lazyBullScheduler(options: { logger: Logger; connection: string; prefix: string }): Scheduler {
  let loaded: Promise<Scheduler> | undefined;
  const get = () => {
    loaded ??= import("./bull-scheduler.js").then(({ BullScheduler }) => new BullScheduler(options));
    return loaded;
  };
  return {
    start: async (onTick) => (await get()).start(onTick),
    upsert: async (job) => (await get()).upsert(job),
    remove: async (jobId) => (await get()).remove(jobId),
    list: async () => (await get()).list(),
    stop: async () => {
      if (loaded) await (await loaded).stop();
    },
  };
}

/** Tuning the composition root may pass through. */
export type CronTuning = Pick<
  CronServiceOptions,
  "maxParallelRuns" | "runTimeoutMs" | "pollIntervalMs" | "now"
>;

/**
 * Builds the cron service of a gateway on `HERALD_HOME/state.db`, through `connection` (the gateway's
 * state connection, so cron writes join its commit batches): call it before `runner.start()` (it adds its
 * listeners and `/sethome`), `start()` the service after, `stop()` it before the runner.
 */
export function createCronService(
  config: HeraldConfig,
  runner: GatewayRunner,
  connection: Database.Database,
  logger: Logger,
  tuning: CronTuning = {},
): CronService {
  const homes = new HomeChannels(runner.state.kv(HOME_CHANNELS_NAMESPACE), (p) =>
    configuredHomeChannel(config, p),
  );
  registerSetHomeCommand(runner, homes);
  return new CronService({
    store: SqliteCronStore.on(connection),
    scheduler: createScheduler(config, logger),
    runner,
    homes,
    config,
    logger,
    ...tuning,
  });
}
