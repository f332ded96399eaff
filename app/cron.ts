/**
 * The cron service of a gateway (part of the composition root): the scheduler the config asks for,
 * the store on the gateway's state connection (cron writes join its commit batches), home channels,
 * `/sethome`, and the service wired to the runner's turn port, events and owner policy (a run acts
 * as its job's maker).
 */
import type Database from "better-sqlite3";
import type { Logger } from "../core/logger.js";
import type { GatewayRunner } from "../gateway/runner.js";
import {
  type CronService,
  CronService as CronServiceClass,
  type CronServiceOptions,
  createScheduler,
  HOME_CHANNELS_NAMESPACE,
  HomeChannels,
  SqliteCronStore,
  setHomeCommand,
} from "../scheduler/index.js";
import type { HeraldConfig } from "./config.js";
import { chatParser, platformModules } from "./platforms.js";

/** Tuning and the toolset limit of jobs' runs, which the composition root passes through. */
export type CronTuning = Pick<
  CronServiceOptions,
  "maxParallelRuns" | "runTimeoutMs" | "pollIntervalMs" | "now" | "toolsetLimit"
>;

/**
 * Builds the cron service: call before `runner.start()` (it subscribes to the runner's events and adds
 * `/sethome`), `start()` it after, `stop()` it before the runner.
 */
export function createCronService(
  config: HeraldConfig,
  runner: GatewayRunner,
  connection: Database.Database,
  logger: Logger,
  tuning: CronTuning = {},
): CronService {
  const homes = new HomeChannels(
    runner.state.kv(HOME_CHANNELS_NAMESPACE),
    (platform) => config.platforms[platform]?.homeChannel,
    chatParser,
  );
  runner.commands.add(setHomeCommand(homes));
  const store = SqliteCronStore.on(connection);
  // A run's tool calls act as the job's maker in its origin chat; a job added on the CLI is the owner's.
  runner.access.resolvePrincipals("cron", (chat) => {
    const job = store.getJob(chat.chatId);
    if (!job) return "nobody";
    return job.origin ? { chat: job.origin, userId: job.createdBy ?? "" } : "owner";
  });
  return new CronServiceClass({
    store,
    scheduler: createScheduler(config, logger),
    control: runner.control,
    sessions: runner.state.sessions,
    turns: runner.state.turns,
    committed: () => runner.state.committed(),
    listeners: runner,
    homes,
    timezone: config.timezone,
    defaultToolsets: config.agent.toolsets,
    platforms: () => [...platformModules.map((m) => m.name), ...runner.adapters.keys()],
    parseChat: chatParser,
    deliveryRule: runner.access,
    logger,
    ...tuning,
  });
}
