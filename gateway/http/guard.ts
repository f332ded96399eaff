/**
 * The one check every request to the gateway's HTTP server passes before its route: who may address it
 * and from which web page. A browser lets any page send a `text/plain` POST or a `no-cors` fetch to
 * 127.0.0.1, and DNS rebinding lets a page read the answers under its own name; so
 * - without API_SERVER_KEY, the API (`/v1/*`, `/mcp`), `/health`, `/metrics` and unknown paths answer
 *   only requests whose Host is a loopback name or address with the server's own port and whose Origin,
 *   if any, is the server's own (or listed in API_SERVER_CORS_ORIGINS); the dashboard does the same while
 *   it has no login;
 * - the JSON endpoints (`/v1/*`, `/mcp`, `/internal/state/*`, `/internal/workspaces/*`) take JSON
 *   bodies only (415; the workspace store's blob upload a tar), which a page cannot send cross-origin
 *   without a CORS preflight;
 * - a CORS preflight is refused unless API_SERVER_CORS_ORIGINS lists its origin, and then the API's
 *   answers allow exactly that origin.
 * Routes with their own secret are not held to the Host rule: webhooks (signed, and often reached
 * through a tunnel or proxy under another name), the state API and the workspace store (HERALD_GATEWAY_KEY) and, with a key,
 * the API and the dashboard's login.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { isLoopbackHost } from "../../agent/tools/web/gateway.js";
import type { Logger } from "../../core/logger.js";

/** What the guard enforces, from the configuration. */
export interface RequestGuardOptions {
  /** No API_SERVER_KEY: the API and the other open routes answer only loopback Host and own Origin. */
  apiKeyless: boolean;
  /** The dashboard has no login (neither DASHBOARD_PASSWORD nor API_SERVER_KEY). */
  dashboardOpen: boolean;
  /** API_SERVER_CORS_ORIGINS: origins whose pages may call the API and `/mcp`. */
  corsOrigins: readonly string[];
  logger: Logger;
}

/** Answers `req` itself when it is refused or a preflight (true), or lets the routes have it (false). */
export type RequestGuard = (req: IncomingMessage, res: ServerResponse, path: string) => boolean;

type Area = "api" | "state" | "dashboard" | "webhook" | "other";

function areaOf(path: string): Area {
  if (path.startsWith("/v1/") || path === "/mcp") return "api";
  if (path === "/internal/state" || path.startsWith("/internal/state/")) return "state";
  if (path.startsWith("/internal/workspaces/")) return "state";
  // The web chat logs in as the dashboard does (the same secrets), so the same rules hold for it.
  if (path === "/dashboard" || path.startsWith("/dashboard/")) return "dashboard";
  if (path === "/chat" || path.startsWith("/chat/")) return "dashboard";
  if (path.startsWith("/webhooks/")) return "webhook";
  return "other";
}

const ALLOW_HEADERS = "authorization, content-type, x-herald-session-id, mcp-protocol-version, last-event-id";
const EXPOSE_HEADERS = "x-herald-session-id, mcp-session-id";

/**
 * `host` (a Host header) split into its canonical name and port (80 when absent), or undefined when it
 * is not `name[:port]`.
 */
export function parseHostHeader(host: string | undefined): { hostname: string; port: number } | undefined {
  if (!host || /[@/?#\\%\s]/.test(host)) return undefined;
  try {
    const url = new URL(`http://${host}/`);
    if (url.username || url.password) return undefined;
    return { hostname: url.hostname, port: url.port ? Number(url.port) : 80 };
  } catch {
    return undefined;
  }
}

/** True when Host `host` names this machine's loopback with `port`, the port the request came in on. */
export function isOwnHost(host: string | undefined, port: number): boolean {
  const parsed = parseHostHeader(host);
  return parsed !== undefined && parsed.port === port && isLoopbackHost(parsed.hostname);
}

/** True when `origin` is a page of this server: `http://` a loopback name or address and `port`. */
export function isOwnOrigin(origin: string, port: number): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.origin !== origin || url.protocol !== "http:") return false;
  return (url.port ? Number(url.port) : 80) === port && isLoopbackHost(url.hostname);
}

/** Builds the guard. */
export function createRequestGuard(options: RequestGuardOptions): RequestGuard {
  const cors = new Set(options.corsOrigins);
  const log = options.logger.child({ component: "http-guard" });
  return (req, res, path) => {
    const area = areaOf(path);
    const port = req.socket.localPort ?? 0;
    const origin = req.headers.origin;
    const listed = origin !== undefined && area === "api" && cors.has(origin);
    const localOnly =
      (options.apiKeyless && (area === "api" || area === "other")) ||
      (options.dashboardOpen && area === "dashboard");
    if (localOnly && refusedAsForeign(req, res, { path, area, port, listed, log })) return true;
    if (req.method === "OPTIONS") {
      if (!listed) {
        log.warn({ path, origin }, "CORS preflight refused");
        refuse(
          res,
          area,
          403,
          "cross_origin_refused",
          `Refused: cross-origin requests from ${origin ?? "(no Origin)"} are not allowed. Fix: list the origin in API_SERVER_CORS_ORIGINS (the API and /mcp only).`,
        );
        return true;
      }
      res.writeHead(204, {
        "access-control-allow-origin": origin,
        "access-control-allow-methods": "GET, POST, DELETE",
        "access-control-allow-headers": ALLOW_HEADERS,
        "access-control-max-age": "600",
        vary: "Origin",
      });
      res.end();
      return true;
    }
    const hasBody = req.method === "POST" || req.method === "PUT" || req.method === "PATCH";
    if (
      hasBody &&
      (area === "api" || area === "state") &&
      !isJson(req.headers["content-type"]) &&
      !isBlobUpload(req, path) &&
      !isBodilessCancel(req, path)
    ) {
      const given = req.headers["content-type"];
      refuse(
        res,
        area,
        415,
        "unsupported_media_type",
        `Send the body as JSON with 'Content-Type: application/json'${given ? ` (this request sent '${given}')` : " (this request sent none)"}: ${path} takes nothing else.`,
      );
      return true;
    }
    if (listed) {
      res.setHeader("access-control-allow-origin", origin);
      res.setHeader("access-control-expose-headers", EXPOSE_HEADERS);
      res.setHeader("vary", "Origin");
    }
    return false;
  };
}

/**
 * Refuses (and answers) a request to a key-less area whose Host is not this server's loopback name and
 * port, or whose Origin is another site's page not listed in API_SERVER_CORS_ORIGINS. False: it may go on.
 */
function refusedAsForeign(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: { path: string; area: Area; port: number; listed: boolean; log: Logger },
): boolean {
  const { path, area, port, listed, log } = ctx;
  const origin = req.headers.origin;
  const fix =
    area === "dashboard"
      ? "set DASHBOARD_PASSWORD to use the dashboard under another name"
      : "set API_SERVER_KEY to serve other names";
  if (!isOwnHost(req.headers.host, port)) {
    log.warn({ path, host: req.headers.host, origin }, "request refused: Host is not this server");
    refuse(
      res,
      area,
      403,
      "host_not_allowed",
      `Refused: the Host header '${req.headers.host ?? ""}' does not name this server. Without a key it answers only requests to itself on this machine (http://127.0.0.1:${port}, http://localhost:${port} or http://[::1]:${port}); another name is a page of another site or a proxy. Fix: open it as http://127.0.0.1:${port}, or ${fix}.`,
    );
    return true;
  }
  if (origin !== undefined && !listed && !isOwnOrigin(origin, port)) {
    log.warn({ path, origin }, "request refused: cross-origin without a key");
    refuse(
      res,
      area,
      403,
      "cross_origin_refused",
      `Refused: a web page of ${origin} may not use this server. Without a key it answers only its own pages (http://127.0.0.1:${port}) and clients that send no Origin. Fix: to let that site's pages use the API, add ${origin} to API_SERVER_CORS_ORIGINS.`,
    );
    return true;
  }
  return false;
}

/** Answers a refused request: plain text on the dashboard, the API's JSON error elsewhere. */
function refuse(res: ServerResponse, area: Area, status: number, code: string, message: string): void {
  if (area === "dashboard") {
    res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
    res.end(message);
    return;
  }
  const body = JSON.stringify({ error: { message, type: "invalid_request_error", param: null, code } });
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

/**
 * A worker's upload of workspace blobs: a tar (no page can send that type cross-origin without a
 * preflight, which is refused).
 */
function isBlobUpload(req: IncomingMessage, path: string): boolean {
  const mime = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  return req.method === "PUT" && path === "/internal/workspaces/-/blobs" && mime === "application/x-tar";
}

/** `application/json` or `application/<x>+json`, with any parameters. */
function isJson(contentType: string | undefined): boolean {
  const mime = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  return mime === "application/json" || /^application\/[a-z0-9.+-]+\+json$/.test(mime);
}

/**
 * `POST /v1/responses/{id}/cancel` with no body, as OpenAI's SDK sends it: nothing to read, so no
 * content type to require (a foreign page is still refused by its Origin).
 */
function isBodilessCancel(req: IncomingMessage, path: string): boolean {
  const length = req.headers["content-length"];
  const empty = length === "0" || (length === undefined && req.headers["transfer-encoding"] === undefined);
  return empty && /^\/v1\/responses\/[A-Za-z0-9_-]{1,200}\/cancel$/.test(path);
}
