/**
 * `herald mcp serve` over stdio: a bridge between an editor's stdio and the running gateway's `/mcp`
 * (streamable HTTP with the API key). Messages pass through unchanged, so stdio and HTTP clients get
 * the same tools, and sends go through the gateway's one outbox (the only process that delivers).
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** Options of {@link runStdioBridge}. */
export interface StdioBridgeOptions {
  /** The gateway's `/mcp` URL. */
  url: URL;
  /** `API_SERVER_KEY`. */
  key: string;
  /** Told about transport errors (stderr: stdout carries the protocol). */
  onError(message: string): void;
}

/** Starts the bridge; resolves when stdin closes. */
export async function runStdioBridge(options: StdioBridgeOptions): Promise<void> {
  // Loaded here, not with the module: the gateway imports this folder and never runs the bridge.
  const [{ StreamableHTTPClientTransport }, { StdioServerTransport }] = await Promise.all([
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
    import("@modelcontextprotocol/sdk/server/stdio.js"),
  ]);
  const stdio = new StdioServerTransport();
  const http = new StreamableHTTPClientTransport(options.url, {
    requestInit: { headers: { authorization: `Bearer ${options.key}` } },
  });
  const closed = new Promise<void>((resolve) => {
    stdio.onclose = () => resolve();
  });
  http.onmessage = (message) => void stdio.send(message);
  http.onerror = (err) => options.onError(`gateway: ${err.message}`);
  stdio.onerror = (err) => options.onError(`stdio: ${err.message}`);
  stdio.onmessage = (message: JSONRPCMessage) => {
    http.send(message).catch((err: unknown) => {
      const text = err instanceof Error ? err.message : String(err);
      options.onError(`gateway: ${text}`);
      // A request must be answered even when the gateway is gone, or the editor waits forever.
      if ("id" in message && "method" in message) {
        void stdio.send({
          jsonrpc: "2.0",
          id: message.id,
          error: { code: -32603, message: `Herald's gateway did not answer at ${options.url.href}: ${text}` },
        });
      }
    });
  };
  await http.start();
  await stdio.start();
  await closed;
  await http.close();
}
