import type { HeraldConfig } from "../../gateway/config.js";
import { HeraldError } from "../../gateway/errors.js";
import type { Logger } from "../../gateway/logger.js";
import type { JobQueue } from "../types.js";
import { EmbeddedJobQueue } from "./embedded-job-queue.js";

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
  if (config.queue.redisUrl) {
    throw new HeraldError("The Redis queue is not available in this build yet; unset REDIS_URL", {
      code: "config_invalid",
    });
  }
  return new EmbeddedJobQueue({ logger });
}
