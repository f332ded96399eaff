/**
 * The gateway's one HTTP server, wired: the guard from the configuration, then the API server, inbound
 * webhooks, the dashboard, `/mcp`, `/health`, `/metrics`, the state API for remote workers and the
 * platforms' webhooks, in that order. The server and its routes are gateway/http's; this file only
 * chooses them.
 */
import type { ApiAdapter } from "../adapters/api/index.js";
import type { Logger } from "../core/logger.js";
import type { MetricsRegistry } from "../core/metrics.js";
import type { JobQueue } from "../core/turn.js";
import type { PlatformAdapter } from "../core/types.js";
import {
  createRequestGuard,
  type HttpServerHandle,
  healthRoute,
  metricsRoute,
  type NodeRoute,
  type SimpleRoute,
  startHttpServer,
} from "../gateway/http/index.js";
import type { HeraldConfig } from "./config.js";

/** What the gateway main hands the server. */
export interface GatewayHttpParts {
  logger: Logger;
  queue: JobQueue;
  /** The runner's adapters (platform webhooks), as they are at each request. */
  adapters: ReadonlyMap<string, PlatformAdapter>;
  /** Adapters that started and those that failed, for `/health`. */
  started: ReadonlyMap<string, PlatformAdapter>;
  failed: ReadonlyMap<string, string>;
  metrics: MetricsRegistry;
  api?: ApiAdapter | undefined;
  /** Node routes after the API: inbound webhooks, the dashboard, `/mcp`. */
  nodeRoutes: NodeRoute[];
  /** The state API, where workers run the turns (Redis). */
  stateApi?: SimpleRoute | undefined;
}

/** Starts the server on the API server's host and port. */
export function startGatewayHttp(config: HeraldConfig, parts: GatewayHttpParts): Promise<HttpServerHandle> {
  const { logger } = parts;
  return startHttpServer(
    {
      logger,
      adapters: parts.adapters,
      api: parts.api,
      guard: createRequestGuard({
        apiKeyless: !config.apiServer.key,
        dashboardOpen: !config.dashboard.password && !config.apiServer.key,
        corsOrigins: config.apiServer.corsOrigins,
        logger,
      }),
      nodeRoutes: parts.nodeRoutes,
      routes: [
        healthRoute({
          queue: parts.queue,
          backend: config.queue.redisUrl ? "redis" : "embedded",
          adapters: parts.started,
          failed: parts.failed,
        }),
        metricsRoute(parts.metrics),
        ...(parts.stateApi ? [parts.stateApi] : []),
      ],
    },
    config.apiServer.host,
    config.apiServer.port,
  );
}
