/**
 * `herald mcp serve`: Herald's MCP server on stdio for an editor, bridged to the running gateway's
 * `/mcp`; without a gateway, sessions and jobs straight from `state.db`, read-only.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Command } from "commander";
import { ConfigError } from "../../core/errors.js";
import {
  createHeraldMcpServer,
  createOfflineMcpPort,
  runStdioBridge,
} from "../../gateway/mcp-server/index.js";
import { SqliteState } from "../../sessions/index.js";
import { type HeraldConfig, loadConfig } from "../config.js";
import { heraldVersion } from "../version.js";
import { cliAction } from "./action.js";

/** Adds `herald mcp serve` (to the `mcp` command group, made here if no one made it yet). */
export function registerMcpServeCommand(
  program: Command,
  config: () => HeraldConfig = () => loadConfig(),
): void {
  const mcp =
    program.commands.find((c) => c.name() === "mcp") ??
    program.command("mcp").description("Model Context Protocol");
  mcp
    .command("serve")
    .description(
      "serve Herald's tools (sessions, send_message, cron) over MCP on stdio, through the running gateway",
    )
    .option(
      "--url <url>",
      "the gateway's HTTP server (default: HERALD_GATEWAY_URL, else the API server's address)",
    )
    .action(
      cliAction(async (opts: { url?: string }) => {
        const cfg = config();
        const key = cfg.apiServer.key;
        if (!key) {
          throw new ConfigError(
            "API_SERVER_KEY",
            "herald mcp serve reaches the gateway's /mcp endpoint with API_SERVER_KEY, which is not set. Fix: set API_SERVER_KEY (the same value for the gateway and for this command) and restart the gateway.",
          );
        }
        const host = ["0.0.0.0", "::"].includes(cfg.apiServer.host) ? "127.0.0.1" : cfg.apiServer.host;
        const base =
          opts.url ??
          cfg.gatewayClient.url ??
          `http://${host.includes(":") ? `[${host}]` : host}:${cfg.apiServer.port}`;
        const url = new URL("/mcp", base);
        const up = await fetch(new URL("/health", base), { signal: AbortSignal.timeout(5000) }).then(
          () => true,
          () => false,
        );
        if (!up) {
          // Read-only from the state file: sessions and jobs, nothing sent.
          process.stderr.write(
            `herald mcp: the gateway does not answer at ${base}; serving sessions and jobs from ${join(cfg.homeDir, "state.db")} read-only (sending and adding jobs need \`herald gateway\`).\n`,
          );
          if (!existsSync(join(cfg.homeDir, "state.db"))) {
            throw new Error(
              `There is no ${join(cfg.homeDir, "state.db")} and no gateway at ${base}: start Herald with \`herald gateway\` (with the API server on), or pass --url.`,
            );
          }
          const state = SqliteState.open(join(cfg.homeDir, "state.db"), {
            groupMode: cfg.sessions.groupSessions,
          });
          const server = await createHeraldMcpServer(createOfflineMcpPort(cfg, state), heraldVersion());
          const transport = new StdioServerTransport();
          const closed = new Promise<void>((resolve) => {
            transport.onclose = () => resolve();
          });
          await server.connect(transport);
          await closed;
          state.close();
          return;
        }
        await runStdioBridge({
          url,
          key,
          onError: (message) => void process.stderr.write(`herald mcp: ${message}\n`),
        });
      }),
    );
}
