/**
 * The gateway's one HTTP server: the API server (`/v1/*`), `GET /health`, `GET /metrics`, and platform
 * webhooks under `/webhooks/<platform>`, handed to the adapter as a web-standard Request. Every request
 * passes the guard first (Host, Origin, CORS, JSON bodies: `guard.ts`). While it listens, its
 * address and port are among the process's own listeners, which agents' fetches never reach.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type OwnListeners, ownListeners } from "../../agent/tools/web/gateway.js";
import { describeError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { PlatformAdapter } from "../../core/types.js";
import type { RequestGuard } from "./guard.js";

/** Serves a path prefix with Node's own request/response (the API server, for streaming). */
export interface NodeRoute {
  handleHttp(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean>;
}

/** Extra routes that answer with a body (health, metrics, the state API for remote workers). */
export type SimpleRoute = (req: IncomingMessage, path: string) => Promise<SimpleResponse | undefined>;

export interface SimpleResponse {
  status: number;
  body: string;
  contentType?: string;
}

export interface HttpServerOptions {
  logger: Logger;
  adapters: ReadonlyMap<string, PlatformAdapter>;
  api?: NodeRoute | undefined;
  /** More routes on Node's request/response (the dashboard, `/mcp`), asked after `api`. */
  nodeRoutes?: NodeRoute[] | undefined;
  routes?: SimpleRoute[];
  /** Asked before any route; answers refused requests and CORS preflights itself. @defaultValue none */
  guard?: RequestGuard | undefined;
  /** Where the server registers its address while it listens. @defaultValue the process's (`ownListeners`) */
  ownListeners?: OwnListeners | undefined;
  /** Largest webhook body accepted. @defaultValue 25 MiB */
  maxBodyBytes?: number;
}

export interface HttpServerHandle {
  server: Server;
  /** `http://host:port` once listening. */
  url: string;
  close(): Promise<void>;
}

/** Starts the server on `host:port` (port 0: a free one). */
export async function startHttpServer(
  options: HttpServerOptions,
  host: string,
  port: number,
): Promise<HttpServerHandle> {
  const log = options.logger.child({ component: "http" });
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      log.error({ error: describeError(err), path: req.url }, "http handler failed");
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      if (!res.writableEnded)
        res.end(JSON.stringify({ error: { message: "internal error", type: "server_error" } }));
    });
  });
  server.keepAliveTimeout = 65_000;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    if (options.guard?.(req, res, path)) return;
    if (options.api && (await options.api.handleHttp(req, res, path))) return;
    for (const route of options.nodeRoutes ?? []) if (await route.handleHttp(req, res, path)) return;
    for (const route of options.routes ?? []) {
      const out = await route(req, path);
      if (out) {
        res.writeHead(out.status, { "content-type": out.contentType ?? "application/json" });
        res.end(out.body);
        return;
      }
    }
    // `/webhooks/telegram`, or a further bot account's `/webhooks/telegram@family`.
    const hook = /^\/webhooks\/([a-z]+(?:@[a-z0-9_-]+)?)(?:\/|$)/.exec(path.replace(/%40/gi, "@"));
    if (hook) {
      const adapter = options.adapters.get(hook[1]!);
      if (!adapter?.handleWebhook) {
        res.writeHead(404, { "content-type": "text/plain" }).end("no webhook for this platform");
        return;
      }
      const response = await adapter.handleWebhook(
        await toRequest(req, options.maxBodyBytes ?? 25 * 1024 * 1024),
      );
      const headers: Record<string, string> = {};
      response.headers.forEach((v, k) => {
        headers[k] = v;
      });
      res.writeHead(response.status, headers);
      res.end(Buffer.from(await response.arrayBuffer()));
      return;
    }
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: `No route ${req.method} ${path}`, type: "not_found" } }));
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const unregister = (options.ownListeners ?? ownListeners).add({
    address: address.address,
    port: address.port,
    label: "Herald's own HTTP server (the API, dashboard, webhooks, state API and /mcp)",
  });
  return {
    server,
    url: `http://${shownHost}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        unregister();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function toRequest(req: IncomingMessage, maxBytes: number): Promise<Request> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw new Error("webhook body too large");
    chunks.push(chunk as Buffer);
  }
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (Array.isArray(v)) for (const item of v) headers.append(k, item);
    else if (v !== undefined) headers.set(k, v);
  }
  const url = `http://${req.headers.host ?? "localhost"}${req.url ?? "/"}`;
  const method = req.method ?? "GET";
  const body = method === "GET" || method === "HEAD" ? undefined : Buffer.concat(chunks);
  return new Request(url, { method, headers, body });
}
