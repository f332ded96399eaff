/**
 * What operators watch over HTTP: `GET /health` (the queue and every adapter's state), `GET /metrics`
 * (the Prometheus text of a registry), and a log line when no worker consumes the Redis queue (turns
 * would wait forever without one).
 */
import type { Logger } from "../../core/logger.js";
import { type MetricsRegistry, PROMETHEUS_CONTENT_TYPE } from "../../core/metrics.js";
import type { JobQueue } from "../../core/turn.js";
import type { PlatformAdapter } from "../../core/types.js";
import { queueStats } from "../metrics.js";
import type { SimpleRoute } from "./server.js";

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
