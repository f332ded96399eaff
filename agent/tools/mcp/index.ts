/**
 * The MCP client: server configs, connections with restarts, the manager, result conversion, the
 * tools over the servers, and `/mcp`, `/reload-mcp`.
 *
 * Loading: importing this folder loads none of the MCP SDK; `sdk.ts` loads the client SDK when the
 * first server connects. The servers start once the gateway serves (after the adapters' first poll and
 * the HTTP server): the tools the model is offered are the ones a running server lists, so a server
 * configured for a turn's use runs from start, but never delays it.
 */

export { formatStatus, type McpReloadTarget, mcpCommands, type ReloadCommandDeps } from "./commands.js";
export {
  type McpServersSection,
  mcpServersSchema,
  mcpToolset,
  resolveMcpServers,
  serverAdmits,
  serverServes,
} from "./config.js";
export { McpConnection, McpUnavailableError } from "./connection.js";
export { convertResult, type FileSink, type SaveTarget } from "./content.js";
export { SAFE_ENV_KEYS, stdioEnvironment } from "./env.js";
export { McpManager, type McpManagerOptions, withMcpServers } from "./manager.js";
export { cleanInputSchema, MAX_TOOL_NAME_CHARS, modelToolName } from "./schema.js";
export { createMcpClient, type McpSettings } from "./setup.js";
export {
  MCP_UTILITY_TOOLSET,
  type McpSaveDir,
  mcpCacheSink,
  mcpServerTools,
  mcpUtilityTools,
} from "./tools.js";
export type * from "./types.js";
export { mcpWorkspaceFiles } from "./workspace-files.js";
