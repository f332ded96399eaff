import { EmbeddedJobQueue } from "../../agent/queue/embedded-job-queue.js";
import { silentLogger } from "../../gateway/logger.js";
import { jobQueueContract } from "./job-queue.contract.js";

jobQueueContract(
  "EmbeddedJobQueue",
  async () => new EmbeddedJobQueue({ logger: silentLogger(), backoffMs: 10 }),
);
