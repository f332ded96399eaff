/**
 * One test's fake model, fake Telegram and `HeraldCluster` on the file's private Redis, torn down after
 * the test: the cluster stops first (its processes die while the fakes still answer), then the fake
 * Telegram closes, then the fake model.
 */
import { afterEach } from "vitest";
import { type FakeLlm, messageText, startFakeLlm } from "../fakes/llm/index.js";
import { type FakeTelegram, startFakeTelegram } from "../fakes/telegram/index.js";
import { HeraldCluster } from "./herald-cluster.js";

/** How `start()` and `startApiOnly()` build the cluster. */
export interface ClusterStartOptions {
  /** Env of the gateway, added after the Telegram settings. */
  gatewayEnv?: Record<string, string>;
  /** `HERALD_QUEUE_LOCK_DURATION_MS` of every process. @defaultValue the configured default */
  lockDurationMs?: number;
  /**
   * Whether `start()` starts the gateway; `false` leaves it to the test (to write its config first).
   * @defaultValue true
   */
  startGateway?: boolean;
}

/** Options of `start()`: those of every cluster, and who may talk to the bot. */
export interface TelegramClusterStartOptions extends ClusterStartOptions {
  /**
   * `TELEGRAM_ALLOWED_USERS` of the gateway; `false` leaves it unset (then allow users through
   * `gatewayEnv`, e.g. `GATEWAY_ALLOW_ALL_USERS`).
   * @defaultValue "111", the user the tests speak as
   */
  allowedUsers?: string | false;
}

/** What `start()` resolves with. */
export interface TelegramCluster {
  c: HeraldCluster;
  tg: FakeTelegram;
  model: FakeLlm;
}

/** What `startApiOnly()` resolves with. */
export interface ApiCluster {
  c: HeraldCluster;
  model: FakeLlm;
}

/** What a test file's tests start their cluster with. */
export interface ClusterPerTest {
  /**
   * Starts the fake model, the fake Telegram and a cluster on the file's Redis whose gateway polls that
   * fake Telegram, then its gateway (unless `startGateway` is false); no worker. Throws when one does
   * not start (the `afterEach` still stops what did).
   */
  start(options?: TelegramClusterStartOptions): Promise<TelegramCluster>;
  /** As `start()`, without Telegram: the gateway's API is the only way in. */
  startApiOnly(options?: ClusterStartOptions): Promise<ApiCluster>;
}

/**
 * Registers an `afterEach` in the calling test file that stops the cluster the test started, then
 * closes its fake Telegram and fake model, and forgets them. Call once at the top level of the file;
 * a file's own `afterEach` registered before this call runs after it (vitest runs them as a stack).
 */
export function clusterPerTest(redis: { readonly url: string }): ClusterPerTest {
  let llm: FakeLlm | undefined;
  let telegram: FakeTelegram | undefined;
  let cluster: HeraldCluster | undefined;
  afterEach(async () => {
    await cluster?.stop();
    await telegram?.close();
    await llm?.close();
    cluster = undefined;
    telegram = undefined;
    llm = undefined;
  });

  async function startCluster(
    model: FakeLlm,
    options: ClusterStartOptions,
    platformEnv: Record<string, string> | undefined,
  ): Promise<HeraldCluster> {
    cluster = new HeraldCluster({
      redisUrl: redis.url,
      llmUrl: model.url,
      lockDurationMs: options.lockDurationMs,
      gatewayEnv: { ...platformEnv, ...options.gatewayEnv },
    });
    if (options.startGateway ?? true) await cluster.startGateway();
    return cluster;
  }

  return {
    async start(options = {}) {
      const model = await startFakeLlm();
      llm = model;
      const tg = await startFakeTelegram();
      telegram = tg;
      const { allowedUsers = "111" } = options;
      const c = await startCluster(model, options, {
        TELEGRAM_BOT_TOKEN: tg.token,
        TELEGRAM_API_ROOT: tg.url,
        ...(allowedUsers === false ? {} : { TELEGRAM_ALLOWED_USERS: allowedUsers }),
      });
      return { c, tg, model };
    },
    async startApiOnly(options = {}) {
      const model = await startFakeLlm();
      llm = model;
      const c = await startCluster(model, options, undefined);
      return { c, model };
    },
  };
}

/** The text of the last user message in a model request's messages. */
export const lastUser = (messages: { role: string }[]): string =>
  messageText([...messages].reverse().find((m) => m.role === "user") as never);
