/**
 * `/reload-mcp` (owner only): restarts every MCP server, with `mcp_servers:` read again from config.yaml.
 * Where this process runs the servers it answers at once with the servers it reloads, and the outcome
 * follows as a notice when they settled; where worker processes run them (Redis) it tells the workers to
 * reload and answers how many it told.
 */
import type { CommandModule } from "../../../core/commands.js";
import { describeError } from "../../../core/errors.js";
import type { Logger } from "../../../core/logger.js";
import type { ChatRef } from "../../../core/types.js";
import type { McpManager } from "./manager.js";
import type { McpServerConfig, McpServerStatus } from "./types.js";

/** Where `/reload-mcp` restarts the servers. */
export type McpReloadTarget =
  /** This process runs the turns, so the servers: its manager restarts them. */
  | { type: "here"; manager: McpManager }
  /** Worker processes run them (Redis): each is told to reload its own, reading its config.yaml. */
  | {
      type: "workers";
      /** Tells every worker to reload; resolves with how many were told. May reject (Redis unreachable). */
      announce(): Promise<number>;
      /** Takes the servers read again: the gateway decides each turn's MCP toolsets from them. Must not throw. */
      adopt(servers: readonly McpServerConfig[]): void;
    };

export interface ReloadCommandDeps {
  target: McpReloadTarget;
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
        s.state === "connected" || s.state === "idle"
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
        // Every chat's MCP tools restart: the owner's decision, not one user's.
        access: "owner",
        run: ({ message }) => {
          let servers: McpServerConfig[];
          try {
            servers = deps.loadServers();
          } catch (err) {
            return `Not reloaded: ${describeError(err)}`;
          }
          const names = servers.map((s) => s.name).join(", ") || "none";
          const { target } = deps;
          if (target.type === "workers") {
            return {
              notice: `Reloading MCP servers on the workers: ${names}.`,
              answer: async () => {
                target.adopt(servers);
                return toldWorkers(target.announce, deps.logger);
              },
            };
          }
          return {
            reply: `Reloading MCP servers: ${names}. I'll say when they are up.`,
            after: () =>
              void target.manager
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

/** Tells the workers and says how that went, honestly: how many heard it, none, or a failure. */
async function toldWorkers(announce: () => Promise<number>, logger: Logger): Promise<string> {
  let told: number;
  try {
    told = await announce();
  } catch (err) {
    logger.error({ err: describeError(err) }, "could not tell the workers to reload their mcp servers");
    return `Could not tell the workers to reload: ${describeError(err)}. Send /reload-mcp again, or restart the workers.`;
  }
  if (told === 0) {
    return "No worker is running, so none was told. A worker starts the MCP servers of its config.yaml when it starts.";
  }
  return `Told ${told} worker${told === 1 ? "" : "s"} to reload the MCP servers; each reads mcp_servers: from its config.yaml again and logs the outcome (herald logs --worker).`;
}
