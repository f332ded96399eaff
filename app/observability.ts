/**
 * What operators watch: the gateway's metrics (fed from the runner's listeners and the queue's
 * `stats()`), the `GET /health` and `GET /metrics` routes, and a log line when no worker consumes the
 * Redis queue (turns would wait forever without one).
 */

import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { MetricsRegistry, PROMETHEUS_CONTENT_TYPE } from "../core/metrics.js";
import { unhandledRejections } from "../core/process-guard.js";
import type { JobQueue } from "../core/turn.js";
import type { PlatformAdapter } from "../core/types.js";
import type { GatewayRunner } from "../gateway/runner.js";
import type { SimpleRoute } from "./http-server.js";

/** Turn latency buckets, seconds: fast fake models to slow multi-tool turns. */
const TURN_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** Start times kept for turns that never finish (cancelled): the oldest are dropped beyond this. */
const MAX_TRACKED_TURNS = 10_000;
/** How long /health and /metrics wait for the queue's figures (Redis may be down). */
const STATS_TIMEOUT_MS = 1_000;

type QueueStats = Awaited<ReturnType<JobQueue["stats"]>>;

/** Reads the queue's figures, or an error when it does not answer in time. */
export async function queueStats(queue: JobQueue): Promise<QueueStats | { error: string }> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      queue.stats(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("the queue did not answer within 1 s")), STATS_TIMEOUT_MS);
      }),
    ]);
  } catch (err) {
    return { error: describeError(err) };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The gateway's metrics registry. Call before `runner.start()` so turns re-offered at start count.
 * Series: `herald_turns_started_total{platform}`, `herald_turns_finished_total{platform,outcome}`,
 * `herald_turn_duration_seconds{outcome}` (queue hand-off to committed result),
 * `herald_deliveries_total{platform,outcome}`, `herald_queue_waiting`, `herald_queue_active`,
 * `herald_queue_workers`, `herald_queue_up`, `herald_unhandled_rejections_total` (logged and survived,
 * see `process-guard.ts`).
 */
export function createGatewayMetrics(runner: GatewayRunner, queue: JobQueue): MetricsRegistry {
  const registry = new MetricsRegistry();
  const started = registry.counter("herald_turns_started_total", "Turns handed to the job queue.");
  const finished = registry.counter(
    "herald_turns_finished_total",
    "Turns whose result was committed, by outcome (ok, failed).",
  );
  const duration = registry.histogram(
    "herald_turn_duration_seconds",
    "Time from handing a turn to the queue to committing its result.",
    TURN_SECONDS,
  );
  const deliveries = registry.counter(
    "herald_deliveries_total",
    "Outbox items delivered or given up on, by platform and outcome.",
  );
  const waiting = registry.gauge("herald_queue_waiting", "Turns waiting in the job queue.");
  const active = registry.gauge("herald_queue_active", "Turns running now.");
  const workers = registry.gauge("herald_queue_workers", "Worker processes consuming the job queue.");
  const up = registry.gauge("herald_queue_up", "1 when the job queue answered the last scrape.");
  const rss = registry.gauge("process_resident_memory_bytes", "Resident set size of this process.");
  const heap = registry.gauge(
    "nodejs_heap_bytes",
    "V8 heap of this process: used (live and not yet collected) and total (reserved).",
  );
  const rejections = registry.counter(
    "herald_unhandled_rejections_total",
    "Promise rejections nobody handled, logged with their stack; the gateway kept running.",
  );
  let rejectionsSeen = 0;

  const startedAt = new Map<string, number>();
  runner.turnStarted.add((job) => {
    started.inc({ platform: job.origin.chat.platform });
    startedAt.delete(job.turnId);
    startedAt.set(job.turnId, performance.now());
    if (startedAt.size > MAX_TRACKED_TURNS) startedAt.delete(startedAt.keys().next().value!);
  });
  runner.turnFinished.add((turn, result) => {
    finished.inc({ platform: turn.chat.platform, outcome: result.kind });
    const t0 = startedAt.get(turn.id);
    startedAt.delete(turn.id);
    if (t0 !== undefined) duration.observe({ outcome: result.kind }, (performance.now() - t0) / 1_000);
  });
  runner.deliverySettled.add((item, outcome) => {
    deliveries.inc({ platform: item.chat.platform, outcome });
  });
  registry.collect(async () => {
    const memory = process.memoryUsage();
    rss.set({}, memory.rss);
    heap.set({ kind: "used" }, memory.heapUsed);
    heap.set({ kind: "total" }, memory.heapTotal);
    rejections.inc({}, unhandledRejections() - rejectionsSeen);
    rejectionsSeen = unhandledRejections();
    const stats = await queueStats(queue);
    if ("error" in stats) {
      up.set({}, 0);
      return;
    }
    up.set({}, 1);
    waiting.set({}, stats.waiting);
    active.set({}, stats.active);
    workers.set({}, stats.workers);
  });
  return registry;
}

/** Options of {@link healthRoute}. */
export interface HealthOptions {
  queue: JobQueue;
  /** "redis" when turns run on `herald worker` processes. */
  backend: "embedded" | "redis";
  adapters: ReadonlyMap<string, PlatformAdapter>;
  failed: ReadonlyMap<string, string>;
}

/**
 * `GET /health`: always 200 while the process serves; `status` is `degraded` when the queue does not
 * answer or, on Redis, no worker consumes it (the `warnings` say what to do).
 */
export function healthRoute(options: HealthOptions): SimpleRoute {
  return async (req, path) => {
    if (req.method !== "GET" || path !== "/health") return undefined;
    const stats = await queueStats(options.queue);
    const warnings: string[] = [];
    if ("error" in stats) warnings.push(`the job queue did not answer: ${stats.error}`);
    else if (options.backend === "redis" && stats.workers === 0) warnings.push(NO_WORKERS);
    const platforms: Record<string, unknown> = {};
    for (const [name, adapter] of options.adapters)
      platforms[name] = adapter.status?.() ?? { state: "running" };
    for (const [name, reason] of options.failed) platforms[name] = { state: "failed", detail: reason };
    const body = {
      status: warnings.length ? "degraded" : "ok",
      queue: { backend: options.backend, ...stats },
      adapters: platforms,
      ...(warnings.length ? { warnings } : {}),
    };
    return { status: 200, body: JSON.stringify(body) };
  };
}

/** `GET /metrics` in the Prometheus text format. */
export function metricsRoute(registry: MetricsRegistry): SimpleRoute {
  return async (req, path) =>
    req.method === "GET" && path === "/metrics"
      ? { status: 200, body: await registry.render(), contentType: PROMETHEUS_CONTENT_TYPE }
      : undefined;
}

const NO_WORKERS =
  "0 workers consume the Redis queue: turns wait until one starts. Fix: run `herald worker` (REDIS_URL, HERALD_GATEWAY_URL, HERALD_GATEWAY_KEY set).";

/**
 * Logs the number of workers on the Redis queue now and whenever it changes between none and some,
 * checking every `intervalMs`. Returns a stop function.
 */
export function watchWorkers(queue: JobQueue, logger: Logger, intervalMs = 15_000): () => void {
  let last: number | undefined;
  const check = async () => {
    const stats = await queueStats(queue);
    if ("error" in stats) return;
    const none = stats.workers === 0;
    if (last === undefined || none !== (last === 0)) {
      if (none) logger.warn({ workers: 0, waiting: stats.waiting }, NO_WORKERS);
      else logger.info({ workers: stats.workers }, "workers consume the Redis queue");
    }
    last = stats.workers;
  };
  void check();
  const timer = setInterval(() => void check(), intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
