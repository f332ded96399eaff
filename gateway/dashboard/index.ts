/**
 * The web dashboard at `/dashboard`, served by the gateway's HTTP server with Node's own request and
 * response (it streams live updates over SSE). Server-rendered pages, one stylesheet, one small script;
 * every change is a POST form with the login's CSRF token, answered with a redirect (303) back. It reads
 * and changes state only through the ports in `types.ts`; `gateway.ts` fills them from the gateway.
 */
export { Activity } from "./activity.js";
export {
  createGatewayDashboard,
  type GatewayDashboardConfig,
  type GatewayDashboardPorts,
} from "./gateway.js";
export { createDashboard, type Dashboard, type DashboardOptions } from "./server.js";
export type * from "./types.js";
