/**
 * The MCP client of one process: the manager of `mcp_servers:`, their resource and prompt tools at
 * once, and each server's own tools once it connected or its cached list was offered (and again on
 * every change). The servers connect in the background (`manager.start()`), nothing waits for them.
 */
import { describeError } from "../../../core/errors.js";
import type { Logger } from "../../../core/logger.js";
import type { ToolRegistry } from "../../tool-registry.js";
import type { McpToolCacheApi } from "./cache.js";
import { mcpToolset } from "./config.js";
import { McpManager } from "./manager.js";
import { type McpSaveDir, mcpServerTools, mcpUtilityTools } from "./tools.js";
import type { McpServerConfig } from "./types.js";

/** The settings the MCP client reads (`HeraldConfig` has this shape). */
export interface McpSettings {
  mcpServers: McpServerConfig[];
}

/**
 * Builds the manager and registers its tools in `registry`. `files` is where the tools' files go (the
 * session's workspace where the file tools are on); undefined: the cache. `toolCache` keeps the
 * servers' tool lists (the `StateClient`'s `mcpTools`); without it every server starts at once.
 */
export function createMcpClient(
  config: McpSettings,
  ports: {
    registry: ToolRegistry;
    logger: Logger;
    files?: McpSaveDir | undefined;
    toolCache?: McpToolCacheApi | undefined;
  },
): McpManager {
  const { registry, files } = ports;
  const log = ports.logger.child({ component: "mcp" });
  const manager = new McpManager({ servers: config.mcpServers, logger: log, cache: ports.toolCache });
  registry.register(...mcpUtilityTools(manager, files));
  manager.toolsChanged.add((name) => {
    const server = manager.get(name);
    registry.describeToolsets({ [mcpToolset(name)]: `tools of the MCP server ${name}` });
    try {
      registry.replaceToolset(mcpToolset(name), server ? mcpServerTools(server, files) : []);
    } catch (err) {
      log.error({ server: name, error: describeError(err) }, "mcp tools not registered");
    }
  });
  return manager;
}
