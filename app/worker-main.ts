/**
 * The composition root of `herald worker`: takes turns from the Redis queue and runs the agent. A
 * worker is stateless: the turn job carries what it needs, and tools reach shared state (sessions,
 * cron, memory, skills) through the gateway's state API. It needs `REDIS_URL`, `HERALD_GATEWAY_URL`,
 * `HERALD_GATEWAY_KEY` and the model endpoint, nothing else.
 */
import { mkdirSync } from "node:fs";
import { isIP } from "node:net";
import { hostname } from "node:os";
import { join } from "node:path";
import { HttpHandoverRemote } from "../agent/exec/handover/index.js";
import { DEFAULT_LIMITS, startHousekeeping, workerHousekeeping } from "../agent/exec/index.js";
import { modelConfigProblem, probeGateway } from "../agent/index.js";
import { createJobQueue } from "../agent/queue/index.js";
import { ownListeners, portOf, systemLookup } from "../agent/tools/web/index.js";
import { ConfigError, describeError, HeraldError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { createAgentRuntime } from "./agent-runtime.js";
import { listenToGateway } from "./announcements.js";
import type { HeraldConfig } from "./config.js";
import { createHttpStateClient } from "./state-client.js";

/** Options of {@link runWorker}. */
export interface WorkerOptions {
  logger: Logger;
  /** Turns this process runs at once. @defaultValue config.queue.concurrency (4) */
  concurrency?: number | undefined;
  /** Overrides the model client's retry timing (tests). */
  retryBaseDelayMs?: number | undefined;
}

/** A running worker. */
export interface WorkerHandle {
  /**
   * Stops taking turns. Turns running now are aborted and handed back to the queue, so another worker
   * (or this one after a restart) runs them; nothing is lost and nothing is answered twice. Idempotent.
   */
  stop(): Promise<void>;
}

/**
 * Starts a worker. Rejects with a `ConfigError` when `REDIS_URL`, `HERALD_GATEWAY_URL` or
 * `HERALD_GATEWAY_KEY` is missing or the gateway refuses the key. A gateway that cannot be reached yet
 * is only logged: tools reach it when they run, and turns come from Redis either way.
 */
export async function runWorker(config: HeraldConfig, options: WorkerOptions): Promise<WorkerHandle> {
  const { logger } = options;
  const { url, key } = requireWorkerConfig(config);
  mkdirSync(join(config.homeDir, "cache"), { recursive: true });
  const forgetGateway = await markGatewayOwn(url, logger);
  const client = { url, key, logger: logger.child({ component: "state-client" }) };
  await probe(client);

  const modelProblem = config.providers.length ? undefined : modelConfigProblem(config.model);
  if (modelProblem)
    logger.warn({ problem: modelProblem }, "no usable model configured: turns will fail until it is");
  const queue = await createJobQueue(config, logger.child({ component: "queue" }));
  const agent = await createAgentRuntime(config, {
    logger,
    queue,
    state: createHttpStateClient(client),
    retryBaseDelayMs: options.retryBaseDelayMs,
    worker: workerIdentity(config, { url, key }),
  });
  // A session reset at the gateway ends the background processes its turns started on this worker;
  // /reload-mcp and /reload-plugins there reload this worker's servers and plugins.
  const stopListening = listenToGateway(queue, {
    config,
    tools: agent.tools,
    plugins: agent.plugins,
    logger,
  });
  const concurrency = options.concurrency ?? config.queue.concurrency;
  try {
    await agent.consume(concurrency);
  } catch (err) {
    forgetGateway();
    stopListening();
    await queue.close();
    await agent.close();
    throw err;
  }
  logger.info({ concurrency, prefix: config.queue.prefix }, "worker consuming turns");
  // Old workspaces (also where workers share HERALD_HOME) and the cache files this worker writes.
  const stopHousekeeping = startHousekeeping(
    workerHousekeeping(config, agent.tools, logger.child({ component: "housekeeping" })),
  );
  agent.startMcp();

  let stopping: Promise<void> | undefined;
  return {
    stop() {
      forgetGateway();
      stopHousekeeping();
      stopListening();
      stopping ??= queue.close().then(() => agent.close());
      return stopping;
    },
  };
}

/**
 * This worker's name (`<host>-<pid>`, as its background processes' ids show it) and, unless
 * `exec.workspace_handover` is off, the gateway's workspace store.
 */
function workerIdentity(config: HeraldConfig, gateway: { url: string; key: string }) {
  const name = `${hostname()
    .replace(/[^A-Za-z0-9.-]+/g, "-")
    .slice(0, 40)}-${process.pid}`;
  if (!config.exec.workspaceHandover) return { name };
  const maxBlobBytes = config.exec.limits.workspaceQuotaBytes ?? DEFAULT_LIMITS.workspaceQuotaBytes;
  return { name, handover: new HttpHandoverRemote({ ...gateway, maxBlobBytes }) };
}

/** The gateway's URL and key; throws a `ConfigError` naming what is missing. */
function requireWorkerConfig(config: HeraldConfig): { url: string; key: string } {
  const { url, key } = config.gatewayClient;
  if (!config.queue.redisUrl) {
    throw new ConfigError(
      "REDIS_URL",
      "herald worker takes turns from Redis, but REDIS_URL is not set. Fix: set REDIS_URL (and HERALD_GATEWAY_URL, HERALD_GATEWAY_KEY), or run only `herald gateway`, which runs its own workers.",
    );
  }
  if (!url || !key) {
    const missing = [!url && "HERALD_GATEWAY_URL", !key && "HERALD_GATEWAY_KEY"]
      .filter(Boolean)
      .join(" and ");
    throw new ConfigError(
      missing.split(" and ")[0]!,
      `herald worker reaches the gateway's state (sessions, cron, memory, skills) over HTTP, but ${missing} ${missing.includes(" and ") ? "are" : "is"} not set. Fix: set HERALD_GATEWAY_URL to the gateway's HTTP server (e.g. http://gateway:8642) and HERALD_GATEWAY_KEY to the same value as on the gateway.`,
    );
  }
  return { url, key };
}

/** Asks the gateway's state API once: a refused key is a `ConfigError`, an unreachable gateway a warning. */
async function probe(client: { url: string; key: string; logger: Logger }): Promise<void> {
  try {
    const { methods } = await probeGateway({ ...client, connectRetryMs: 0 });
    client.logger.info({ gateway: client.url, methods: methods.length }, "gateway state API reachable");
  } catch (err) {
    if (err instanceof HeraldError && err.code === "unauthorized") {
      throw new ConfigError(
        "HERALD_GATEWAY_KEY",
        `The gateway at ${client.url} refused HERALD_GATEWAY_KEY. Fix: set HERALD_GATEWAY_KEY to the gateway's value.`,
      );
    }
    client.logger.warn(
      { gateway: client.url, err: describeError(err) },
      "gateway not reachable yet; tools will retry",
    );
  }
}

/**
 * Adds the gateway at `url` (by its name and the addresses it resolves to now) to the listeners the
 * agents' fetches never reach: on this machine or beside it, its dashboard and API trust requests from
 * where the worker runs. Returns the function that removes it.
 */
async function markGatewayOwn(url: string, logger: Logger): Promise<() => void> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (err) {
    throw new ConfigError(
      "HERALD_GATEWAY_URL",
      `HERALD_GATEWAY_URL '${url}' is not a URL. Fix: set it to the gateway's HTTP server, e.g. http://gateway:8642.`,
      { cause: err },
    );
  }
  const hostname = parsed.hostname.replace(/^\[|\]$/g, "");
  let addresses = [hostname];
  if (!isIP(hostname)) {
    try {
      addresses = (await systemLookup(hostname)).map((a) => a.address);
    } catch (err) {
      logger.warn({ gateway: url, err: describeError(err) }, "the gateway's name does not resolve yet");
    }
  }
  const label = `the Herald gateway this worker reports to (HERALD_GATEWAY_URL)`;
  const remove = addresses.map((address) =>
    ownListeners.add({ address, port: portOf(parsed), hostname, label }),
  );
  return () => {
    for (const r of remove) r();
  };
}
