/**
 * The cached tool lists of the MCP servers: the `mcpTools` member of the `StateClient` (kept by the
 * gateway in `state.db`, reached over its state API from a worker), the hash of what defines a server,
 * and the argument schemas of the member's methods.
 *
 * A server's entry is fresh while its definition hash matches and it is younger than
 * `MCP_TOOL_CACHE_MAX_AGE_MS`; the hash covers the transport, command, args, cwd, url, protocol and the
 * names (never the values) of `env` and `headers`, so a changed definition lists again and no secret is
 * written. The list is stored before `tools.include`/`exclude` apply: changing those needs no new list.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import type { MethodsOf, StateMethodSchemas } from "../../state-methods.js";
import type { McpServerConfig } from "./types.js";

/** One tool as `tools/list` gave it (before the include/exclude filter). */
export interface McpListedTool {
  name: string;
  description: string;
  /** The server's JSON Schema of the arguments. */
  inputSchema: Record<string, unknown>;
  readOnly: boolean;
}

/** A server's cached list. */
export interface McpCachedList {
  tools: McpListedTool[];
  /** When it was listed (epoch ms). */
  listedAt: number;
}

/** Where the tool lists are kept. Methods may reject (the gateway unreachable): callers then list live. */
export interface McpToolCacheApi {
  /** The list cached for `server` under `definition` (its hash), or undefined. */
  get(server: string, definition: string): Promise<McpCachedList | undefined>;
  /** Stores `tools` as `server`'s list under `definition`, replacing any other. */
  put(server: string, definition: string, tools: McpListedTool[]): Promise<void>;
}

declare module "../../types.js" {
  interface StateClient {
    /** The MCP servers' cached tool lists; absent where no state keeps them (then servers start at once). */
    mcpTools?: McpToolCacheApi | undefined;
  }
}

/** How long a cached list stands for a server that has not run since: a week. */
export const MCP_TOOL_CACHE_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;

const MAX_TOOLS = 1000;

const listedToolSchema = z.strictObject({
  name: z.string().min(1).max(256),
  description: z.string().max(16_000),
  inputSchema: z.record(z.string(), z.unknown()),
  readOnly: z.boolean(),
});

/** A stored list, as read back (anything else counts as no entry). */
export const listedToolsSchema = z.array(listedToolSchema).max(MAX_TOOLS);

/** The argument schemas of the `mcpTools` member. */
export const mcpToolsStateMethods = {
  "mcpTools.get": z.tuple([z.string().min(1).max(64), z.string().min(1).max(128)]),
  "mcpTools.put": z.tuple([z.string().min(1).max(64), z.string().min(1).max(128), listedToolsSchema]),
} satisfies StateMethodSchemas<MethodsOf<"mcpTools">>;

/** The hash of what defines `config` as a process or endpoint: see the module comment. */
export function definitionHash(config: McpServerConfig): string {
  const definition =
    config.transport === "stdio"
      ? {
          transport: "stdio",
          command: config.command,
          args: config.args,
          cwd: config.cwd ?? null,
          env: Object.keys(config.env).sort(),
        }
      : {
          transport: "http",
          url: config.url,
          protocol: config.protocol,
          headers: Object.keys(config.headers).sort(),
        };
  return createHash("sha256").update(JSON.stringify(definition)).digest("hex").slice(0, 32);
}

/** The cache keys of `servers` as configured now: what `SqliteMcpToolCache.retain` keeps. */
export function cacheKeys(servers: readonly McpServerConfig[]): { server: string; definition: string }[] {
  return servers.map((s) => ({ server: s.name, definition: definitionHash(s) }));
}

/**
 * Whether `entry` (listed at `listedAt`) may stand in for the live list at `now`. A list from the
 * future (a clock set back) counts as stale.
 */
export function isFresh(entry: McpCachedList | undefined, now = Date.now()): entry is McpCachedList {
  if (!entry) return false;
  const age = now - entry.listedAt;
  return age >= 0 && age < MCP_TOOL_CACHE_MAX_AGE_MS;
}

/** `McpToolCacheApi` over a store of JSON rows (the gateway's `SqliteMcpToolCache`). */
export function jsonToolCache(store: {
  get(server: string, definition: string): { tools: string; listedAt: number } | undefined;
  put(server: string, definition: string, tools: string): void;
}): McpToolCacheApi {
  return {
    async get(server, definition) {
      const row = store.get(server, definition);
      if (!row) return undefined;
      let parsed: unknown;
      try {
        parsed = JSON.parse(row.tools);
      } catch {
        return undefined;
      }
      const tools = listedToolsSchema.safeParse(parsed);
      return tools.success ? { tools: tools.data, listedAt: row.listedAt } : undefined;
    },
    async put(server, definition, tools) {
      store.put(server, definition, JSON.stringify(tools));
    },
  };
}
