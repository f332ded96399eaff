import { randomBytes } from "node:crypto";
import { afterAll, beforeAll } from "vitest";
import { BullJobQueue } from "../../agent/queue/bull-job-queue.js";
import { EmbeddedJobQueue } from "../../agent/queue/embedded-job-queue.js";
import { silentLogger } from "../../core/logger.js";
import { type PrivateRedis, startRedis } from "../helpers/redis.js";
import { jobQueueContract } from "./job-queue.contract.js";

jobQueueContract(
  "EmbeddedJobQueue",
  async () => new EmbeddedJobQueue({ logger: silentLogger(), backoffMs: 10 }),
);

let redis: PrivateRedis | undefined;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

jobQueueContract(
  "BullJobQueue",
  async () =>
    new BullJobQueue({
      logger: silentLogger(),
      connection: redis!.url,
      // A unique prefix per case: cases share the server, never keys.
      prefix: `test-${randomBytes(6).toString("hex")}`,
      backoffMs: 10,
      busyDelayMs: 100,
    }),
);
