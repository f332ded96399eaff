/**
 * The gateway's HTTP surface: one server for the API, platform and inbound webhooks, `/health`,
 * `/metrics`, the dashboard, `/mcp` and the state API. Every request passes one guard first (Host,
 * Origin, CORS, JSON bodies); while it listens the server is among the process's own listeners, which
 * no agent fetch reaches. The composition root hands it the routes.
 */
export {
  createRequestGuard,
  isOwnHost,
  isOwnOrigin,
  parseHostHeader,
  type RequestGuard,
  type RequestGuardOptions,
} from "./guard.js";
export { type HealthOptions, healthRoute, metricsRoute, watchWorkers } from "./health.js";
export {
  type HttpServerHandle,
  type HttpServerOptions,
  type NodeRoute,
  type SimpleResponse,
  type SimpleRoute,
  startHttpServer,
} from "./server.js";
