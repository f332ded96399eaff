/**
 * The gateway's metrics: a registry (core/metrics.ts) fed from the runner's events and, at each
 * scrape, from the queue's `stats()` and the process's memory. `queueStats` reads the queue's figures
 * with a time limit, for `/metrics`, `/health` and the dashboard.
 */
import { describeError } from "../core/errors.js";
import { MetricsRegistry } from "../core/metrics.js";
import { unhandledRejections } from "../core/process-guard.js";
import type { JobQueue } from "../core/turn.js";
import type { GatewayRunner } from "./runner.js";

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
 * see core/process-guard.ts).
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
  runner.on("turn-started", ({ job }) => {
    started.inc({ platform: job.origin.chat.platform });
    startedAt.delete(job.turnId);
    startedAt.set(job.turnId, performance.now());
    if (startedAt.size > MAX_TRACKED_TURNS) startedAt.delete(startedAt.keys().next().value!);
  });
  runner.on("turn-finished", ({ turn, result }) => {
    finished.inc({ platform: turn.chat.platform, outcome: result.kind });
    const t0 = startedAt.get(turn.id);
    startedAt.delete(turn.id);
    if (t0 !== undefined) duration.observe({ outcome: result.kind }, (performance.now() - t0) / 1_000);
  });
  runner.on("delivery-settled", ({ item, outcome }) => {
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
