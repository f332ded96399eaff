/**
 * The `mcp_servers:` settings: the servers by name (agent/tools/mcp/config.ts), resolved with their
 * secrets from the environment; the reference rows, how the section's keys are read (server, env and
 * header names kept as written), and the doctor's line per server.
 */
import { type DoctorLine, defineFeature } from "../../../core/settings.js";
import { type McpServersSection, mcpServersSchema, resolveMcpServers } from "./config.js";
import type { McpServerConfig } from "./types.js";

const snakeToCamel = (s: string) => s.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

function camelDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(camelDeep);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [snakeToCamel(k), camelDeep(v)]));
  }
  return value;
}

/** `mcp_servers:` with each server's own keys camelised, but not server names, env or header names. */
export function camelMcpServers(section: unknown): unknown {
  if (!section || typeof section !== "object" || Array.isArray(section)) return section;
  return Object.fromEntries(
    Object.entries(section).map(([name, server]) => {
      if (!server || typeof server !== "object" || Array.isArray(server)) return [name, server];
      return [
        name,
        Object.fromEntries(
          Object.entries(server).map(([k, v]) => [
            snakeToCamel(k),
            k === "env" || k === "headers" ? v : camelDeep(v),
          ]),
        ),
      ];
    }),
  );
}

/** One doctor line per configured server: connected with its tool count and time, or why not. */
export async function checkMcpServers(servers: McpServerConfig[]): Promise<DoctorLine[]> {
  if (servers.length === 0) return [];
  const { withMcpServers } = await import("./manager.js");
  const started = performance.now();
  const ms = () => `${Math.round(performance.now() - started)} ms`;
  return withMcpServers(servers, async (manager) =>
    manager.status().map((s): DoctorLine => {
      if (s.state === "disabled") return { ok: true, text: `MCP ${s.name}: disabled` };
      const everyone = servers.find((c) => c.name === s.name)?.access === "everyone";
      const whose = everyone
        ? "; its tools reach EVERY allowed user (access: everyone), paired and allow-all users included"
        : "; owners only";
      if (s.state === "connected")
        return {
          ok: true,
          text: `MCP ${s.name}: connected (${s.transport}), ${s.tools} tools, ${ms()}${whose}`,
          ...(everyone
            ? {
                fix: `only for a server that reads and acts nowhere else; otherwise remove access: everyone from mcp_servers.${s.name}`,
              }
            : {}),
        };
      return {
        ok: false,
        text: `MCP ${s.name}: not connected (${s.transport}): ${s.error ?? s.state}${whose}`,
        fix: `check mcp_servers.${s.name} in config.yaml; \`herald mcp test ${s.name}\` shows the details`,
      };
    }),
  );
}

/** The MCP servers the agent uses. */
export const mcpServersSettings = defineFeature({
  key: "mcpServers",
  schema: mcpServersSchema,
  env: {},
  reference: {
    intro:
      "A map from server name (1-32 letters, digits, `_`, `-`) to its settings; see [Tools](tools.md#mcp-servers).",
    rows: [
      [
        "<name>.command, .args",
        "a server Herald starts, over stdio (exactly one of `command` and `url`)",
        "",
      ],
      // biome-ignore lint/suspicious/noTemplateCurlyInString: config.yaml's own `${NAME}` syntax, shown as written
      ["<name>.env", "a stdio server's environment besides the safe base; values may be `${NAME}`", "none"],
      ["<name>.cwd", "relative to `HERALD_HOME`", "the process's"],
      ["<name>.url", "a remote server", ""],
      ["<name>.transport", "`auto` (streamable HTTP, then SSE), `streamable_http`, `sse`"],
      // biome-ignore lint/suspicious/noTemplateCurlyInString: config.yaml's own `${NAME}` syntax, shown as written
      ["<name>.headers", "remote only; values may be `${NAME}`", "none"],
      [
        "<name>.bearer_token_env",
        "remote only: `Authorization: Bearer` from this variable",
        "none",
        "the name given",
      ],
      ["<name>.enabled", ""],
      ["<name>.timeout_s", "per call"],
      [
        "<name>.idle_timeout_s",
        "seconds without a call before the server is stopped; its tools stay offered (cached in state.db) and the next call starts it; `0` keeps it running (a server that holds state, such as a browser)",
      ],
      ["<name>.tools.include, .exclude", "which of its tools the agent gets", "all, none"],
      ["<name>.platforms", "platforms whose turns get it", "every platform"],
      ["<name>.groups", "group chats get it too"],
      ["<name>.access", "whose turns get its tools: `owners`, or `everyone` admitted"],
    ],
  },
  resolve: (section: McpServersSection, { env, homeDir }) => resolveMcpServers(section, env, homeDir),
  doctor: (servers) => checkMcpServers(servers),
  camelKeys: camelMcpServers,
});
