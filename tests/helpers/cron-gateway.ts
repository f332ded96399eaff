/**
 * A hand-assembled gateway process for cron tests that need a part `startGateway` does not take (a
 * BullScheduler, a real email adapter): the real runner, embedded queue, SQLite state and cron service,
 * with a stub turn handler instead of the model (these tests are about scheduling and delivery).
 */
import { join } from "node:path";
import { EmbeddedJobQueue } from "../../agent/queue/embedded-job-queue.js";
import { loadConfig } from "../../app/config.js";
import { platformModules } from "../../app/platforms.js";
import { silentLogger } from "../../core/logger.js";
import type { TurnJob } from "../../core/turn.js";
import type { PlatformAdapter } from "../../core/types.js";
import { GatewayRunner } from "../../gateway/runner.js";
import { CronService } from "../../scheduler/cron-service.js";
import { EmbeddedScheduler } from "../../scheduler/embedded-scheduler.js";
import { HOME_CHANNELS_NAMESPACE, HomeChannels } from "../../scheduler/home-channels.js";
import { SqliteCronStore } from "../../scheduler/sqlite-cron-store.js";
import type { CronJobSpec, CronRun, Scheduler } from "../../scheduler/types.js";
import { SqliteState } from "../../sessions/sqlite-state.js";

export interface CronGatewayOptions {
  homeDir: string;
  /** @defaultValue an EmbeddedScheduler */
  scheduler?: Scheduler;
  /** Started with the runner's inbound handler; stopped with the process. */
  adapters?: PlatformAdapter[];
  /** Jobs written to the state file before the service starts, by id. */
  jobs?: Record<string, { spec: CronJobSpec; nextRunAt: number }>;
  /** The reply of each run. @defaultValue `report <turn id>` */
  reply?: (job: TurnJob) => string;
}

export interface CronGateway {
  service: CronService;
  runner: GatewayRunner;
  /** A job's runs read from the file, newest first. */
  runs(jobId: string): CronRun[];
  stop(): Promise<void>;
}

/** Starts the process; `stop()` closes everything it opened. */
export async function startCronGateway(options: CronGatewayOptions): Promise<CronGateway> {
  const logger = silentLogger();
  const config = loadConfig({ env: { HERALD_HOME: options.homeDir, HERALD_LOG_LEVEL: "silent" } });
  const path = join(options.homeDir, "state.db");
  const state = SqliteState.open(path);
  const store = SqliteCronStore.open(path);
  for (const [id, { spec, nextRunAt }] of Object.entries(options.jobs ?? {})) {
    store.insertJob(id, spec, nextRunAt, Date.now());
  }
  const queue = new EmbeddedJobQueue({ logger });
  const reply = options.reply ?? ((job) => `report ${job.turnId}`);
  await queue.consume(async (job) => ({
    kind: "ok",
    turnId: job.turnId,
    messages: [{ role: "assistant", content: reply(job) }],
    reply: { text: reply(job) },
    usage: { promptTokens: 0, completionTokens: 0, modelCalls: 1, toolCalls: 0 },
    model: "stub",
  }));
  const runner = new GatewayRunner({ config, state, queue, logger });
  for (const adapter of options.adapters ?? []) runner.addAdapter(adapter);
  const service = new CronService({
    store,
    scheduler: options.scheduler ?? new EmbeddedScheduler({ logger }),
    control: runner.control,
    sessions: state.sessions,
    turns: state.turns,
    committed: () => state.committed(),
    listeners: runner,
    homes: new HomeChannels(state.kv(HOME_CHANNELS_NAMESPACE)),
    timezone: config.timezone,
    defaultToolsets: config.agent.toolsets,
    platforms: () => [...platformModules.map((m) => m.name), ...runner.adapters.keys()],
    logger,
  });
  runner.start();
  for (const adapter of options.adapters ?? []) await adapter.start(runner.handleInbound);
  await service.start();
  return {
    service,
    runner,
    runs(jobId) {
      const reader = SqliteCronStore.open(path);
      try {
        return reader.runs(jobId, 1000);
      } finally {
        reader.close();
      }
    },
    async stop() {
      await service.stop();
      for (const adapter of options.adapters ?? []) await adapter.stop();
      await runner.stop();
      await queue.close();
      state.close();
    },
  };
}
