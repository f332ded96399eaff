/**
 * Herald as an MCP server: its tools (sessions, send_message, cron) over the `HeraldMcpPort`, the
 * `/mcp` route of the API server (streamable HTTP behind `API_SERVER_KEY`), and the stdio bridge of
 * `herald mcp serve`.
 */
export { createMcpHttpRoute, type McpHttpOptions } from "./http.js";
export {
  createMcpPort,
  createMcpRoute,
  createOfflineMcpPort,
  type McpPortConfig,
  type McpPortParts,
} from "./port.js";
export { createHeraldMcpServer, MCP_TOOL_NAMES } from "./server.js";
export { runStdioBridge, type StdioBridgeOptions } from "./stdio-bridge.js";
export type * from "./types.js";
