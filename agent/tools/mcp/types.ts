/**
 * Contracts of the MCP client: a configured server (stdio or remote), what a server offers, and the
 * manager that keeps the connections.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/** What every server entry of `mcp_servers:` has. */
interface McpServerCommon {
  /** The key under `mcp_servers:`. */
  name: string;
  enabled: boolean;
  /** The longest a call may take (the connection handshake: this, but at least 30 s). */
  timeoutMs: number;
  /**
   * How long the server runs without a call before it is stopped; its tools stay offered (from the
   * cached list) and the next call starts it. 0 or undefined: it runs as long as Herald does.
   */
  idleTimeoutMs?: number | undefined;
  /** Only these tools (names as the server gives them); empty: all. */
  include: string[];
  /** Never these tools. */
  exclude: string[];
  /** Platforms whose turns get this server's tools; undefined: every platform. */
  platforms: string[] | undefined;
  /** Whether group chats get its tools too (DMs of allowed users do). */
  groups: boolean;
  /**
   * Whose turns get its tools: `owners` (the users the configuration names, and the operator's
   * channels), or `everyone` admitted (pairing codes and `GATEWAY_ALLOW_ALL_USERS` included).
   */
  access: "owners" | "everyone";
}

/** A server Herald starts as a child process and talks to over stdin/stdout. */
export interface McpStdioServerConfig extends McpServerCommon {
  transport: "stdio";
  command: string;
  args: string[];
  /** The child's whole environment: the safe base plus the configured `env` (nothing else of Herald's). */
  env: Record<string, string>;
  cwd: string | undefined;
}

/** A server reached over HTTP: streamable HTTP, falling back to the older SSE transport. */
export interface McpRemoteServerConfig extends McpServerCommon {
  transport: "http";
  url: string;
  /** `auto` tries streamable HTTP, then SSE. */
  protocol: "auto" | "streamable_http" | "sse";
  /** Headers sent with every request (an `Authorization` from `bearer_token_env` included). */
  headers: Record<string, string>;
}

export type McpServerConfig = McpStdioServerConfig | McpRemoteServerConfig;

/** One tool of a server, after the include/exclude filter. */
export interface McpToolInfo {
  server: string;
  /** The tool's name on the server. */
  name: string;
  description: string;
  /** The server's JSON Schema of the arguments. */
  inputSchema: Record<string, unknown>;
  /** The server says the tool changes nothing (`annotations.readOnlyHint`). */
  readOnly: boolean;
}

/**
 * Where a server's connection is. `idle`: not running, its tools offered from the cached (or last) list;
 * the next call starts it.
 */
export type McpServerState = "disabled" | "idle" | "connecting" | "connected" | "retrying" | "stopped";

/** A server's status line (`herald mcp list`, `/reload-mcp`, doctor). */
export interface McpServerStatus {
  name: string;
  transport: "stdio" | "streamable_http" | "sse";
  state: McpServerState;
  tools: number;
  /** Why the last connection failed or ended. */
  error?: string | undefined;
  /** Failed connection attempts since the last good one. */
  attempts: number;
  /** The child's process id (stdio, connected). */
  pid?: number | undefined;
}

/** Options of one call. */
export interface McpCallOptions {
  signal: AbortSignal;
  /** Progress notifications of a long call, as a short line. Must not throw. */
  onProgress?: ((line: string) => void) | undefined;
}

/** A server's resource as listed. */
export interface McpResourceInfo {
  uri: string;
  name: string;
  description?: string | undefined;
  mimeType?: string | undefined;
}

/** One connected (or connecting) server. */
export interface McpServerHandle {
  readonly config: McpServerConfig;
  status(): McpServerStatus;
  /**
   * Its tools now (empty until connected or given a cached list; kept while it restarts, whose calls
   * then fail at once, and while it is idle).
   */
  tools(): McpToolInfo[];
  /**
   * Calls a tool; an idle server is started first. @throws McpUnavailableError at once when the server
   * is not connected (and not idle), McpToolGoneError when the server no longer lists the tool.
   */
  callTool(name: string, args: Record<string, unknown>, options: McpCallOptions): Promise<CallToolResult>;
  listResources(options: McpCallOptions): Promise<McpResourceInfo[]>;
  readResource(uri: string, options: McpCallOptions): Promise<ReadResourceContents>;
  /** Its prompts: name, argument names (a trailing `?` marks optional ones), description. */
  listPrompts(
    options: McpCallOptions,
  ): Promise<{ name: string; arguments: string[]; description?: string | undefined }[]>;
  getPrompt(name: string, args: Record<string, string>, options: McpCallOptions): Promise<PromptMessages>;
}

/** `resources/read`'s contents. */
export type ReadResourceContents = { uri: string; mimeType?: string; text?: string; blob?: string }[];

/** `prompts/get`'s answer, reduced to what the model reads. */
export interface PromptMessages {
  description?: string | undefined;
  messages: { role: string; content: unknown }[];
}
