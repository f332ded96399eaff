/**
 * The MCP client SDK, loaded when the first server connects: about a third of a second of imports
 * (the SDK, ajv, zod-to-json-schema) that a process whose servers never connect never pays.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";

/** The SDK's classes the client side uses. */
export interface McpClientSdk {
  Client: typeof Client;
  SSEClientTransport: typeof SSEClientTransport;
  StdioClientTransport: typeof StdioClientTransport;
  StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport;
  ErrorCode: typeof ErrorCode;
  McpError: typeof McpError;
}

let loading: Promise<McpClientSdk> | undefined;

/** Loads the client SDK once; later calls share the first load. */
export function loadMcpClientSdk(): Promise<McpClientSdk> {
  loading ??= Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/sse.js"),
    import("@modelcontextprotocol/sdk/client/stdio.js"),
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js"),
  ]).then(([client, sse, stdio, http, types]) => ({
    Client: client.Client,
    SSEClientTransport: sse.SSEClientTransport,
    StdioClientTransport: stdio.StdioClientTransport,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    ErrorCode: types.ErrorCode,
    McpError: types.McpError,
  }));
  return loading;
}
