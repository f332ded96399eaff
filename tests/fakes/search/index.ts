/**
 * Fake SearXNG, Brave Search and Tavily APIs on 127.0.0.1. Each checks a request the way the real API
 * does (path, method, parameters, auth header) and answers in the real shape. Trigger queries:
 * "rate limit me" → 429, "server error" → 503, "slow" → answers after 3 s, "nothing" → no results.
 */
import type { ServerResponse } from "node:http";
import { braveBody, braveEmptyBody, braveError, searxngBody, tavilyBody } from "./payloads.js";
import { delay, type FakeServer, type RecordedRequest, sendJson, startFakeServer } from "./server.js";

export type { FakeServer, RecordedRequest } from "./server.js";

/** Shared trigger queries; returns true when it answered. */
async function triggers(
  query: string,
  res: ServerResponse,
  rateLimitBody: unknown,
  headers: Record<string, string>,
) {
  if (query === "rate limit me") {
    sendJson(res, 429, rateLimitBody, headers);
    return true;
  }
  if (query === "server error") {
    res.writeHead(503, { "content-type": "text/html" });
    res.end("<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>");
    return true;
  }
  if (query === "slow") await delay(3000);
  return false;
}

/**
 * SearXNG: GET /search with q and format=json. Like a real instance, any other format gets 403 (formats
 * not enabled in settings.yml), as does json itself with `jsonDisabled`; a missing q gets 400. With `token`, it sits behind a proxy that wants
 * `Authorization: Bearer <token>` (401 otherwise). Its limiter answers 429 with Retry-After.
 */
export function startFakeSearxng(
  options: { token?: string; jsonDisabled?: boolean } = {},
): Promise<FakeServer> {
  return startFakeServer(async (req: RecordedRequest, res) => {
    if (req.method !== "GET" || (req.path !== "/search" && req.path !== "/")) return sendJson(res, 404, {});
    if (options.token && req.headers.authorization !== `Bearer ${options.token}`) {
      res.writeHead(401, { "content-type": "text/html", "www-authenticate": 'Bearer realm="searxng"' });
      return res.end("<html><body>401 Authorization Required</body></html>");
    }
    if (req.query.format !== "json" || options.jsonDisabled) {
      res.writeHead(403, { "content-type": "text/html" });
      return res.end("<!doctype html><title>403 Forbidden</title><h1>Forbidden</h1>");
    }
    const q = req.query.q ?? "";
    if (!q) return sendJson(res, 400, { error: "No query" });
    if (await triggers(q, res, { error: "Too Many Requests" }, { "retry-after": "30" })) return;
    const body = searxngBody(q);
    sendJson(res, 200, q === "nothing" ? { ...body, results: [] } : body);
  });
}

/**
 * Brave: GET /res/v1/web/search with q and count (1–20, else 422) and the key in X-Subscription-Token
 * (401 SUBSCRIPTION_TOKEN_INVALID otherwise). Rate limit: 429 with X-RateLimit-* headers and no
 * Retry-After, as Brave sends it.
 */
export function startFakeBrave(options: { key: string }): Promise<FakeServer> {
  return startFakeServer(async (req, res) => {
    if (req.method !== "GET" || req.path !== "/res/v1/web/search")
      return sendJson(res, 404, braveError(404, "NOT_FOUND", "Not found"));
    if (req.headers["x-subscription-token"] !== options.key)
      return sendJson(
        res,
        401,
        braveError(401, "SUBSCRIPTION_TOKEN_INVALID", "The provided subscription token is invalid."),
      );
    const q = req.query.q ?? "";
    const count = Number(req.query.count ?? "20");
    if (!q || !Number.isInteger(count) || count < 1 || count > 20)
      return sendJson(res, 422, braveError(422, "VALIDATION", "Unable to validate request parameter(s)."));
    const limits = {
      "x-ratelimit-limit": "1, 2000",
      "x-ratelimit-remaining": "0, 1500",
      "x-ratelimit-reset": "1, 1419704",
    };
    if (
      await triggers(q, res, braveError(429, "RATE_LIMITED", "Request rate limit exceeded for plan."), limits)
    )
      return;
    sendJson(res, 200, q === "nothing" ? braveEmptyBody(q) : braveBody(q, count));
  });
}

/**
 * Tavily: POST /search with a JSON body (`query` required, `max_results` 0–20) and the key as
 * `Authorization: Bearer tvly-…` (401 otherwise). Rate limit: 429 with Retry-After.
 */
export function startFakeTavily(options: { key: string }): Promise<FakeServer> {
  return startFakeServer(async (req, res) => {
    if (req.method !== "POST" || req.path !== "/search") return sendJson(res, 404, { detail: "Not Found" });
    if (req.headers.authorization !== `Bearer ${options.key}`)
      return sendJson(res, 401, { detail: { error: "Unauthorized: missing or invalid API key." } });
    if (!req.headers["content-type"]?.startsWith("application/json"))
      return sendJson(res, 400, { detail: { error: "Body must be JSON" } });
    const body = JSON.parse(req.body || "{}") as { query?: unknown; max_results?: unknown };
    const max = body.max_results === undefined ? 5 : Number(body.max_results);
    if (typeof body.query !== "string" || !body.query || !Number.isInteger(max) || max < 0 || max > 20)
      return sendJson(res, 400, {
        detail: { error: "Invalid request: query is required, max_results 0-20" },
      });
    const tooMany = { detail: { error: "Rate limit exceeded. Please try again later." } };
    if (await triggers(body.query, res, tooMany, { "retry-after": "12" })) return;
    const answer = tavilyBody(body.query, max);
    sendJson(res, 200, body.query === "nothing" ? { ...answer, results: [] } : answer);
  });
}
