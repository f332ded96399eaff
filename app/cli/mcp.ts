/**
 * `herald mcp list | test <name>`: the configured MCP servers, connected from this terminal (the
 * gateway's own connections are not touched), and a check of one server with timings. (The doctor's
 * line per server is the MCP settings' own: agent/tools/mcp/settings.ts.)
 */
import type { Command } from "commander";
import {
  convertResult,
  type McpServerConfig,
  type McpToolInfo,
  withMcpServers,
} from "../../agent/tools/mcp/index.js";
import { describeError } from "../../core/errors.js";
import { loadConfig } from "../config.js";
import { cliAction } from "./action.js";

const out = (text: string) => process.stdout.write(`${text}\n`);
const ms = (since: number) => `${Math.round(performance.now() - since)} ms`;

/** Where a server is: its command line or URL (headers and env values are never shown). */
function describeServer(s: McpServerConfig): string {
  const where = s.transport === "stdio" ? [s.command, ...s.args].join(" ") : `${s.url} (${s.protocol})`;
  const scope = `${s.platforms ? s.platforms.join(", ") : "every platform"}${s.groups ? ", groups too" : ", DMs only"}, ${s.access === "everyone" ? "EVERY allowed user (access: everyone)" : "owners only"}`;
  return `${where}; ${scope}${s.enabled ? "" : "; disabled"}`;
}

/** A tool safe to call for a check: read-only by the server's word and needing no arguments. */
export function harmlessTool(tools: readonly McpToolInfo[]): McpToolInfo | undefined {
  const required = (t: McpToolInfo) => {
    const r = t.inputSchema["required"];
    return Array.isArray(r) ? r.length : 0;
  };
  return tools.find((t) => t.readOnly && required(t) === 0);
}

/** Adds the `mcp` command group to the `herald` program. */
export function registerMcpCommands(program: Command): void {
  const mcp = program.command("mcp").description("the MCP servers of mcp_servers: in config.yaml");
  mcp
    .command("list")
    .description("connect to every configured server and list its tools")
    .action(cliAction(listServers));
  mcp
    .command("test <name>")
    .description("start one server, list its tools, call a harmless one, with timings")
    .option("--tool <tool>", "the tool to call (default: the first read-only one without required arguments)")
    .option("--args <json>", "the tool's arguments as JSON", "{}")
    .action(cliAction(testServer));
}

/** `herald mcp list`: every configured server's state and tools. */
async function listServers(): Promise<void> {
  const config = loadConfig();
  if (config.mcpServers.length === 0) {
    out("No MCP servers are configured (mcp_servers: in config.yaml).");
    return;
  }
  await withMcpServers(config.mcpServers, async (manager) => {
    for (const server of manager.servers()) {
      const s = server.status();
      out(`${s.name}: ${s.state}${s.error ? ` (${s.error})` : ""}\n  ${describeServer(server.config)}`);
      for (const tool of server.tools()) out(`  - ${tool.name}: ${tool.description.split("\n")[0]}`);
    }
    if (manager.status().some((s) => s.state !== "connected" && s.state !== "disabled")) process.exitCode = 1;
  });
}

/** `herald mcp test <name>`: one server's start, tools and a harmless call, with timings. */
async function testServer(name: string, opts: { tool?: string; args: string }): Promise<void> {
  const config = loadConfig();
  const entry = config.mcpServers.find((s) => s.name === name);
  if (!entry) {
    const names = config.mcpServers.map((s) => s.name).join(", ") || "none";
    throw new Error(`There is no MCP server '${name}' in mcp_servers: (configured: ${names}).`);
  }
  let args: Record<string, unknown>;
  try {
    args = JSON.parse(opts.args) as Record<string, unknown>;
  } catch (err) {
    throw new Error(
      `--args is not valid JSON (${(err as Error).message}). Fix: e.g. --args '{"message":"hi"}'.`,
    );
  }
  out(`${name}: ${describeServer(entry)}`);
  const started = performance.now();
  await withMcpServers([{ ...entry, enabled: true }], async (manager) => {
    const server = manager.get(name)!;
    const status = server.status();
    if (status.state !== "connected") {
      out(`✗ did not connect after ${ms(started)}: ${status.error ?? status.state}`);
      process.exitCode = 1;
      return;
    }
    out(`✓ connected (${status.transport}) and listed ${status.tools} tools in ${ms(started)}`);
    for (const tool of server.tools()) out(`  - ${tool.name}${tool.readOnly ? " (read-only)" : ""}`);
    const tool = opts.tool ? server.tools().find((t) => t.name === opts.tool) : harmlessTool(server.tools());
    if (!tool) {
      out(
        opts.tool
          ? `✗ ${name} has no tool '${opts.tool}'`
          : "no read-only tool without required arguments to call; name one with --tool and --args",
      );
      if (opts.tool) process.exitCode = 1;
      return;
    }
    const callStarted = performance.now();
    try {
      const result = await server.callTool(tool.name, args, {
        signal: AbortSignal.timeout(entry.timeoutMs),
      });
      const converted = await convertResult(result, undefined);
      const text = converted.text.length > 300 ? `${converted.text.slice(0, 300)}…` : converted.text;
      out(`${converted.isError ? "✗" : "✓"} called ${tool.name} in ${ms(callStarted)}:\n${text}`);
      if (converted.isError) process.exitCode = 1;
    } catch (err) {
      out(`✗ calling ${tool.name} failed after ${ms(callStarted)}: ${describeError(err)}`);
      process.exitCode = 1;
    }
  });
}
