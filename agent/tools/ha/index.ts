/**
 * The `ha` toolset: Home Assistant as tools — `ha_list_entities` (compact, filtered by domain, area and
 * search), `ha_get_state`, `ha_list_services`, `ha_call_service` — over Home Assistant's WebSocket API
 * with a long-lived access token (`client.ts`, on home-assistant-js-websocket with a `ws` socket,
 * both loaded on the first call). Offered only when `ha.url` and `ha.token` are set (`setup.ts`).
 *
 * Design:
 * - One connection per process, opened on first use and kept; the library reconnects it. Reads that
 *   found it lost are sent once more; a service call is never sent twice.
 * - The configured address is the only one the toolset reaches, private or not: it takes no address
 *   from the model, so the web tools' private-address guard has nothing to judge here.
 * - Calls in `ha.approve` (locks, alarm panels, garage doors and gates by default) are held for the
 *   user's approval through the agent loop's held calls (`approval.ts`): the answer resumes the turn
 *   and Herald runs exactly the approved call once.
 */
export type { HaClientOptions, HaServices, HaState } from "./client.js";
export { haTools } from "./declaration.js";
export { createHaTools, type HaToolSettings, type HaToolset } from "./setup.js";
