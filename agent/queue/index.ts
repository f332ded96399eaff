import type { Logger } from "../../core/logger.js";
import type { JobQueue } from "../../core/turn.js";
import { EmbeddedJobQueue } from "./embedded-job-queue.js";

export {
  createEmbeddedJobQueue,
  EmbeddedJobQueue,
  type EmbeddedJobQueueOptions,
} from "./embedded-job-queue.js";

/**
 * Builds the configured job queue: BullMQ on Redis when `queue.redisUrl` is set (the gateway enqueues,
 * `herald worker` processes consume), else the in-process queue. The Redis backend is loaded only then:
 * bullmq and ioredis cost memory and start-up time the embedded default never needs. The caller owns
 * the queue and must `close()` it.
 */
/** What the queue needs of the `queue` config section. */
export interface JobQueueConfig {
  queue: { redisUrl?: string | undefined; prefix: string; lockDurationMs: number };
}

export async function createJobQueue(config: JobQueueConfig, logger: Logger): Promise<JobQueue> {
  const { redisUrl, prefix, lockDurationMs } = config.queue;
  if (!redisUrl) return new EmbeddedJobQueue({ logger });
  const { BullJobQueue } = await import("./bull-job-queue.js");
  return new BullJobQueue({
    logger,
    connection: redisUrl,
    prefix,
    lockDurationMs,
    // A killed worker's turn comes back within lock + check interval.
    stalledIntervalMs: Math.min(15_000, Math.round(lockDurationMs * 0.75)),
  });
}
