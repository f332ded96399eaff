/**
 * The cron service on the gateway: the scheduler the config asks for, the store on the gateway's state
 * connection (cron writes join its commit batches), home channels, `/sethome`, and the service wired to
 * the runner's turn port, events and owner policy (a run acts as its job's maker).
 */
import type Database from "better-sqlite3";
import type { DeliveryRule, Principal } from "../core/access.js";
import type { CommandModule } from "../core/commands.js";
import type { Logger } from "../core/logger.js";
import type { TurnControl } from "../core/turn.js";
import type { ChatRef, KeyValueStore } from "../core/types.js";
import type { SessionStore, TurnJournal } from "../sessions/index.js";
import { createScheduler } from "./create.js";
import { type CronListeners, CronService, type CronServiceOptions } from "./cron-service.js";
import { HOME_CHANNELS_NAMESPACE, HomeChannels, setHomeCommand } from "./home-channels.js";
import { SqliteCronStore } from "./sqlite-cron-store.js";

/** What cron needs of the gateway (`GatewayRunner` has this shape). */
export interface CronGateway extends CronListeners {
  state: {
    kv(namespace: string): KeyValueStore;
    sessions: Pick<SessionStore, "open" | "load" | "reset">;
    turns: Pick<TurnJournal, "get">;
    committed(): Promise<void>;
  };
  control: TurnControl;
  commands: { add(module: CommandModule): unknown };
  /** The owner policy: decides deliveries, and learns whom a run of platform `cron` acts for. */
  access: DeliveryRule & {
    resolvePrincipals(platform: string, resolve: (chat: ChatRef) => Principal): void;
  };
  /** The running adapters, by platform. */
  adapters: ReadonlyMap<string, unknown>;
}

/** The settings cron reads (`HeraldConfig` has this shape). */
export interface CronConfig {
  timezone: string;
  queue: { redisUrl?: string | undefined; prefix: string };
  agent: { toolsets: string[] };
  platforms: Readonly<Record<string, { homeChannel?: string | undefined } | undefined>>;
}

/** Tuning and the toolset limit of jobs' runs, which the composition root passes through. */
export type CronTuning = Pick<
  CronServiceOptions,
  "maxParallelRuns" | "runTimeoutMs" | "pollIntervalMs" | "now" | "toolsetLimit"
>;

/** What the cron service is built on. */
export interface CronPorts {
  gateway: CronGateway;
  /** The gateway's state connection. */
  database: Database.Database;
  /** Every platform this build knows (a target may name one that is not running). */
  platforms: readonly string[];
  /** Parses a chat string with every platform's chat-id rules. */
  parseChat: (value: string) => ChatRef | undefined;
  logger: Logger;
}

/**
 * Builds the cron service: call before `runner.start()` (it subscribes to the runner's events and
 * adds `/sethome`), `start()` it after, `stop()` it before the runner.
 */
export function createCronService(
  config: CronConfig,
  ports: CronPorts,
  tuning: CronTuning = {},
): CronService {
  const { gateway: runner, parseChat, logger } = ports;
  const homes = new HomeChannels(
    runner.state.kv(HOME_CHANNELS_NAMESPACE),
    (platform) => config.platforms[platform]?.homeChannel,
    parseChat,
  );
  runner.commands.add(setHomeCommand(homes));
  const store = SqliteCronStore.on(ports.database);
  // A run's tool calls act as the job's maker in its origin chat; a job added on the CLI is the owner's.
  runner.access.resolvePrincipals("cron", (chat) => {
    const job = store.getJob(chat.chatId);
    if (!job) return "nobody";
    return job.origin ? { chat: job.origin, userId: job.createdBy ?? "" } : "owner";
  });
  return new CronService({
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
    platforms: () => [...ports.platforms, ...runner.adapters.keys()],
    parseChat,
    deliveryRule: runner.access,
    logger,
    ...tuning,
  });
}
