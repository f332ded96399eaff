/**
 * Builds the scheduler the configuration asks for (BullMQ job schedulers with `REDIS_URL`, else the
 * in-process timer).
 */
import type { Logger } from "../core/logger.js";
import { EmbeddedScheduler } from "./embedded-scheduler.js";
import type { Scheduler } from "./types.js";

/** The configured scheduler: `BullScheduler` when `queue.redisUrl` is set, else `EmbeddedScheduler`. */
export function createScheduler(
  config: { queue: { redisUrl?: string | undefined; prefix: string } },
  logger: Logger,
): Scheduler {
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
