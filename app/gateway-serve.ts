/**
 * What `herald gateway` serves once its adapters poll and its agent side is up (part of the composition
 * root, imported then): the dashboard and the HTTP server (the API, a worker's state API on Redis,
 * inbound webhooks, platforms' webhooks and pages, Herald's MCP server). Loaded after the first poll, so
 * none of it delays it.
 */
import type { ApiAdapter } from "../adapters/api/index.js";
import { isLoopbackHost } from "../agent/tools/web/gateway.js";
import type { Logger } from "../core/logger.js";
import type { JobQueue } from "../core/turn.js";
import type { PlatformAdapter } from "../core/types.js";
import { createGatewayDashboard } from "../gateway/dashboard/index.js";
import { type HttpServerHandle, watchWorkers } from "../gateway/http/index.js";
import { createMcpRoute } from "../gateway/mcp-server/index.js";
import type { SqliteState } from "../sessions/index.js";
import type { HeraldConfig } from "./config.js";
import type { GatewayFeatures } from "./gateway-features.js";
import { startGatewayHttp } from "./http-server.js";
import { chatParser } from "./platforms.js";
import { createStateApiRoute } from "./state-api.js";
import { heraldVersion } from "./version.js";
import { workspaceStoreRoute } from "./workspace-api.js";

export { watchWorkers };

/** What the gateway serves from. */
interface ServeParts {
  state: SqliteState;
  queue: JobQueue;
  logger: Logger;
  features: GatewayFeatures;
  api: ApiAdapter | undefined;
  started: ReadonlyMap<string, PlatformAdapter>;
  failed: ReadonlyMap<string, string>;
}

/** The dashboard (unless `localOnly`) and the HTTP server, when anything is to be served. */
export async function serveGateway(
  config: HeraldConfig,
  parts: ServeParts,
): Promise<{ dashboard: { close(): void } | undefined; http: HttpServerHandle | undefined }> {
  const { state, queue, logger, features, started, failed } = parts;
  const dashboard = createGatewayDashboard(config, {
    state,
    runner: features.runner,
    queue,
    cron: features.cron,
    approvals: features.approvals,
    learning: features.learning,
    adapters: started,
    failed,
    loopbackServer: isLoopbackHost(config.apiServer.host),
    logger,
  });
  const http = await startHttp(config, { ...parts, dashboard });
  return { dashboard, http };
}

/** Herald's MCP server at `/mcp` of the API server. */
function mcpRoute(config: HeraldConfig, state: SqliteState, features: GatewayFeatures, logger: Logger) {
  return createMcpRoute(config, {
    state,
    runner: features.runner,
    cron: features.cron,
    parseChat: chatParser,
    version: heraldVersion(),
    logger,
  });
}

/**
 * The HTTP server, when something is to be served: the API, a worker's state API (Redis), the
 * dashboard, inbound webhooks, or a platform's webhook.
 */
async function startHttp(
  config: HeraldConfig,
  parts: ServeParts & { dashboard: ReturnType<typeof createGatewayDashboard> },
): Promise<HttpServerHandle | undefined> {
  const { state, logger, features, api, started, dashboard } = parts;
  const { webhooks, runner } = features;
  const redis = Boolean(config.queue.redisUrl);
  const adapterRoutes = [...started.values()].some((a) => a.handleHttp);
  if (
    !api &&
    !redis &&
    !dashboard &&
    !webhooks &&
    !adapterRoutes &&
    ![...started.values()].some((a) => a.handleWebhook)
  )
    return undefined;
  return startGatewayHttp(config, {
    logger,
    queue: parts.queue,
    adapters: runner.adapters,
    started,
    failed: parts.failed,
    metrics: features.metrics,
    api,
    nodeRoutes: [
      ...(webhooks ? [webhooks] : []),
      ...(dashboard ? [dashboard] : []),
      ...(api ? [mcpRoute(config, state, features, logger)] : []),
      ...[workspaceStoreRoute(config, state, logger)].filter((r) => r !== undefined),
      // Platforms with pages of their own (the web chat's /chat), as each runs at the request.
      {
        handleHttp: async (req, res, path) => {
          for (const adapter of runner.adapters.values())
            if (adapter.handleHttp && (await adapter.handleHttp(req, res, path))) return true;
          return false;
        },
      },
    ],
    stateApi: redis
      ? createStateApiRoute({
          state: features.localState,
          key: config.gatewayClient.key,
          logger,
          committed: () => state.committed(),
        })
      : undefined,
  });
}
