import type { HeraldConfig } from "../../gateway/config.js";
import type { Logger } from "../../gateway/logger.js";
import type { JobQueue } from "../types.js";
import { BullJobQueue } from "./bull-job-queue.js";
import { EmbeddedJobQueue } from "./embedded-job-queue.js";

export { BullJobQueue, type BullJobQueueOptions, createBullJobQueue } from "./bull-job-queue.js";
export {
  createEmbeddedJobQueue,
  EmbeddedJobQueue,
  type EmbeddedJobQueueOptions,
} from "./embedded-job-queue.js";

/**
 * Builds the configured job queue: BullMQ on Redis when `queue.redisUrl` is set, else the in-process
 * queue. The caller owns the queue and must `close()` it.
 */
export function createJobQueue(config: Pick<HeraldConfig, "queue">, logger: Logger): JobQueue {
  const { redisUrl, prefix } = config.queue;
  if (redisUrl) return new BullJobQueue({ logger, connection: redisUrl, prefix });
  return new EmbeddedJobQueue({ logger });
}
