/**
 * The MCP client: server configs, connections with restarts, the manager, result conversion, the
 * tools over the servers, and `/mcp`, `/reload-mcp`.
 *
 * Loading: importing this folder loads none of the MCP SDK; `sdk.ts` loads the client SDK when the
 * first server connects. The servers start once the gateway serves (after the adapters' first poll and
 * the HTTP server), never delaying it; the tools the model is offered are the ones a server lists.
 *
 * Starting on first use: each server's `tools/list` answer is cached in `state.db` (`cache.ts`, keyed
 * by its name and a hash of its definition, no secret values). A server with an idle timeout
 * (`idle_timeout_s`, 300 s unless set; 0 keeps it running as long as Herald) and a fresh cached list is
 * not started with the gateway: its tools are offered from the cache, and its first call starts it,
 * checks the live list and runs. A server without one starts in the background, lists, is cached, and
 * stops once idle. An idle server's exit is no error: the next call starts it again. The gateway deletes
 * the cached lists of servers removed from `mcp_servers:` (or whose definition changed) when it starts
 * and on `/reload-mcp`.
 */

export {
  cacheKeys,
  definitionHash,
  isFresh,
  jsonToolCache,
  MCP_TOOL_CACHE_MAX_AGE_MS,
  type McpCachedList,
  type McpListedTool,
  type McpToolCacheApi,
  mcpToolsStateMethods,
} from "./cache.js";
export { formatStatus, type McpReloadTarget, mcpCommands, type ReloadCommandDeps } from "./commands.js";
export {
  type McpServersSection,
  mcpServersSchema,
  mcpToolset,
  resolveMcpServers,
  serverAdmits,
  serverServes,
} from "./config.js";
export { McpConnection } from "./connection.js";
export { convertResult, type FileSink, type SaveTarget } from "./content.js";
export { SAFE_ENV_KEYS, stdioEnvironment } from "./env.js";
export { McpToolGoneError, McpUnavailableError } from "./errors.js";
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
