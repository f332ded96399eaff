/** The MCP client: server configs, connections with restarts, the manager, result conversion. */

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
export { cleanInputSchema, modelToolName } from "./schema.js";
export type * from "./types.js";
