/**
 * `/reload-mcp`: restarts every MCP server, with `mcp_servers:` read again from config.yaml. Answered
 * at once with the servers it reloads; the outcome follows as a notice when they settled.
 */
import type { CommandModule } from "../core/commands.js";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { ChatRef } from "../core/types.js";
import type { McpManager } from "./manager.js";
import type { McpServerConfig, McpServerStatus } from "./types.js";

export interface ReloadCommandDeps {
  manager: McpManager;
  /** Reads `mcp_servers:` again. May throw a ConfigError: the reload is refused with its message. */
  loadServers(): McpServerConfig[];
  /** Sends the outcome to the chat (the outbox). Must not throw. */
  notify(chat: ChatRef, text: string): void;
  logger: Logger;
}

/** One line per server: `everything: connected, 12 tools (stdio)`. */
export function formatStatus(status: readonly McpServerStatus[]): string {
  if (status.length === 0) return "No MCP servers are configured (mcp_servers: in config.yaml).";
  return status
    .map((s) => {
      const tail =
        s.state === "connected"
          ? `, ${s.tools} tool${s.tools === 1 ? "" : "s"}`
          : s.error
            ? `: ${s.error}`
            : "";
      return `${s.name}: ${s.state}${tail} (${s.transport})`;
    })
    .join("\n");
}

/** The `/reload-mcp` command. */
export function mcpCommands(deps: ReloadCommandDeps): CommandModule {
  return {
    commands: {
      "reload-mcp": {
        description: "restart the MCP servers (reads mcp_servers: in config.yaml again)",
        run: ({ message }) => {
          let servers: McpServerConfig[];
          try {
            servers = deps.loadServers();
          } catch (err) {
            return `Not reloaded: ${describeError(err)}`;
          }
          const names = servers.map((s) => s.name).join(", ") || "none";
          return {
            reply: `Reloading MCP servers: ${names}. I'll say when they are up.`,
            after: () =>
              void deps.manager
                .reload(servers)
                .then((status) => deps.notify(message.chat, `MCP servers reloaded:\n${formatStatus(status)}`))
                .catch((err: unknown) =>
                  deps.logger.error({ error: describeError(err) }, "mcp reload failed"),
                ),
          };
        },
      },
    },
  };
}
