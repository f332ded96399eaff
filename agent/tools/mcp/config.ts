/**
 * The `mcp_servers:` section of config.yaml: its zod schema, and its resolution into typed server
 * configs (the stdio child's environment, `${VAR}` references and bearer tokens read from the
 * environment). Every error names the key and the fix.
 */
import { resolve } from "node:path";
import { z } from "zod";
import { ConfigError } from "../../../core/errors.js";
import { stdioEnvironment } from "./env.js";
import type { McpServerConfig } from "./types.js";

const stringMap = z.record(z.string(), z.string()).default({});

/** One entry under `mcp_servers:` (keys camelised, except the names in `env` and `headers`). */
export const mcpServerSchema = z
  .strictObject({
    /** A stdio server: the program to start. */
    command: z.string().min(1).optional(),
    args: z.array(z.string()).default([]),
    /** Extra environment of a stdio server; values may be `${NAME}` (from Herald's environment and .env). */
    env: stringMap,
    cwd: z.string().min(1).optional(),
    /** A remote server: its MCP endpoint. */
    url: z.url().optional(),
    /** Remote only: `auto` (streamable HTTP, then SSE), `streamable_http` or `sse`. */
    transport: z.enum(["auto", "streamable_http", "sse"]).default("auto"),
    /** Remote only: headers; values may be `${NAME}`. */
    headers: stringMap,
    /** Remote only: the environment variable (or .env entry) holding a bearer token. */
    bearerTokenEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable name")
      .optional(),
    enabled: z.boolean().default(true),
    timeoutS: z.number().positive().default(60),
    /**
     * Seconds without a call after which the server is stopped; its tools stay offered from the cached
     * list in state.db and the next call starts it again (a server whose list is cached is not started
     * with the gateway). 0 keeps it running as long as Herald, for a server that holds state between
     * calls (a browser). @defaultValue 300
     */
    idleTimeoutS: z.number().min(0).max(86_400).default(300),
    tools: z
      .strictObject({ include: z.array(z.string()).default([]), exclude: z.array(z.string()).default([]) })
      .prefault({}),
    /** Platforms whose turns get its tools. @defaultValue every platform */
    platforms: z.array(z.string().min(1)).optional(),
    /** Group chats get its tools too. @defaultValue false */
    groups: z.boolean().default(false),
    /**
     * Whose turns get its tools: `owners`, or `everyone` admitted. A server acts with the operator's
     * credentials (posts to Slack, GitHub, email…), so it serves owners unless opened. @defaultValue "owners"
     */
    access: z.enum(["owners", "everyone"]).default("owners"),
  })
  .refine((s) => Boolean(s.command) !== Boolean(s.url), {
    message:
      "set either command (a server Herald starts, over stdio) or url (a remote server), exactly one of them",
  });

/** The whole section: server name → server. */
export const mcpServersSchema = z
  .record(
    z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, "a server name is 1-32 letters, digits, '_' or '-'"),
    mcpServerSchema,
  )
  .default({});

export type McpServersSection = z.infer<typeof mcpServersSchema>;

/**
 * The typed server list of a parsed section. `env` is Herald's environment (process env over .env):
 * only the safe base (PATH, HOME…) and what the entry names reach a stdio child.
 * @throws ConfigError naming the key when a `${NAME}` or `bearer_token_env` is not set.
 */
export function resolveMcpServers(
  section: McpServersSection,
  env: Readonly<Record<string, string | undefined>>,
  /** A relative `cwd` is taken from here (`HERALD_HOME`). @defaultValue the process's directory */
  baseDir?: string,
): McpServerConfig[] {
  return Object.entries(section).map(([name, s]) => {
    const key = `mcp_servers.${name}`;
    const common = {
      name,
      enabled: s.enabled,
      timeoutMs: Math.round(s.timeoutS * 1000),
      idleTimeoutMs: Math.round(s.idleTimeoutS * 1000),
      include: s.tools.include,
      exclude: s.tools.exclude,
      platforms: s.platforms,
      groups: s.groups,
      access: s.access,
    };
    if (s.command) {
      for (const field of ["headers", "bearerTokenEnv"] as const)
        if (field === "headers" ? Object.keys(s.headers).length > 0 : s.bearerTokenEnv)
          throw new ConfigError(
            `${key}.${field === "headers" ? "headers" : "bearer_token_env"}`,
            `${key} is a stdio server (command), which takes no ${field === "headers" ? "headers" : "bearer_token_env"}. Fix: pass secrets to it through ${key}.env.`,
          );
      return {
        ...common,
        transport: "stdio",
        command: s.command,
        args: s.args,
        env: stdioEnvironment(interpolate(s.env, env, `${key}.env`), env),
        cwd: s.cwd && baseDir ? resolve(baseDir, s.cwd) : s.cwd,
      };
    }
    if (Object.keys(s.env).length > 0 || s.cwd)
      throw new ConfigError(
        `${key}.env`,
        `${key} is a remote server (url), which takes no env or cwd. Fix: remove them, or use headers / bearer_token_env.`,
      );
    const headers = interpolate(s.headers, env, `${key}.headers`);
    if (s.bearerTokenEnv) {
      const token = env[s.bearerTokenEnv];
      if (!token)
        throw new ConfigError(
          `${key}.bearer_token_env`,
          `${key}.bearer_token_env names ${s.bearerTokenEnv}, which is not set. Fix: add ${s.bearerTokenEnv}=<token> to HERALD_HOME/.env or the environment.`,
        );
      headers["Authorization"] = `Bearer ${token}`;
    }
    return { ...common, transport: "http", url: s.url!, protocol: s.transport, headers };
  });
}

/** Replaces `${NAME}` in each value with the environment's NAME. */
function interpolate(
  values: Record<string, string>,
  env: Readonly<Record<string, string | undefined>>,
  key: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(values)) {
    out[name] = value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, ref: string) => {
      const found = env[ref];
      if (found === undefined)
        throw new ConfigError(
          `${key}.${name}`,
          `${key}.${name} refers to \${${ref}}, which is not set. Fix: add ${ref}=<value> to HERALD_HOME/.env or the environment.`,
        );
      return found;
    });
  }
  return out;
}

/** The toolset holding a server's tools (`mcp_<server>`); `mcp` holds the resource and prompt tools. */
export function mcpToolset(server: string): string {
  return `mcp_${server}`;
}

/** Whether turns on `platform` in a `chatType` chat get `server`'s tools (its `platforms` and `groups`). */
export function serverServes(server: McpServerConfig, platform: string, chatType: string): boolean {
  if (!server.enabled) return false;
  if (server.platforms && !server.platforms.includes(platform)) return false;
  return chatType !== "group" || server.groups;
}

/** Whether a turn that acts for an owner (or not) gets `server`'s tools (its `access`). */
export function serverAdmits(server: Pick<McpServerConfig, "access">, owner: boolean): boolean {
  return owner || server.access === "everyone";
}
