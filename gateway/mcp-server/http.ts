/**
 * Herald's MCP server over streamable HTTP at `/mcp` on the API server, stateless: each POST gets a
 * fresh server and transport (JSON responses), so nothing is held between requests. Every request must
 * carry `Authorization: Bearer <API_SERVER_KEY>`; without a configured key the endpoint is off (sending
 * messages is an owner's power, and loopback is no proof of one).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { describeError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import { createHeraldMcpServer } from "./server.js";
import type { HeraldMcpPort } from "./types.js";

/** Options of {@link createMcpHttpRoute}. */
export interface McpHttpOptions {
  port: HeraldMcpPort;
  /** `API_SERVER_KEY`; undefined turns the endpoint off (503 with the fix). */
  key: string | undefined;
  /** Herald's version, told to clients. */
  version: string;
  logger: Logger;
  /** @defaultValue "/mcp" */
  path?: string;
}

/** The route for the gateway's HTTP server (`handleHttp` resolves false for other paths). */
export function createMcpHttpRoute(options: McpHttpOptions): {
  handleHttp(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean>;
} {
  const mount = options.path ?? "/mcp";
  const log = options.logger.child({ component: "mcp-server" });
  const digest = (value: string) => createHash("sha256").update(value).digest();
  const expected = options.key ? digest(options.key) : undefined;

  return {
    async handleHttp(req, res, path) {
      if (path !== mount) return false;
      if (!expected) {
        fail(
          res,
          503,
          "Herald's MCP endpoint is off: set API_SERVER_KEY on the gateway and send it as a bearer token.",
        );
        return true;
      }
      const header = req.headers.authorization ?? "";
      // Digests have one length, so the comparison takes the same time whatever was sent.
      if (!timingSafeEqual(digest(header.startsWith("Bearer ") ? header.slice(7) : ""), expected)) {
        log.warn({ remote: req.socket.remoteAddress }, "MCP request with a wrong or missing key");
        fail(res, 401, "A valid API_SERVER_KEY is required (Authorization: Bearer <key>).");
        return true;
      }
      if (req.method !== "POST") {
        // Stateless: no server-initiated stream to open and no session to delete.
        res.writeHead(405, { allow: "POST", "content-type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "Use POST." }, id: null }));
        return true;
      }
      // The SDK loads with the first request (memoised by the module system), not at start.
      const { StreamableHTTPServerTransport } = await import(
        "@modelcontextprotocol/sdk/server/streamableHttp.js"
      );
      const server = await createHeraldMcpServer(options.port, options.version);
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      res.on("close", () => {
        void transport.close();
        void server.close();
      });
      try {
        await server.connect(transport);
        await transport.handleRequest(req, res);
      } catch (err) {
        log.error({ err: describeError(err) }, "MCP request failed");
        if (!res.headersSent) fail(res, 500, "internal error");
      }
      return true;
    },
  };
}

function fail(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message }, id: null }));
}
