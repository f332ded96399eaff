/**
 * Mattermost's REST API v4. `Client4` from `@mattermost/client` names the routes and builds the request
 * headers (the bearer token); the request itself goes through one `fetch` here, because Client4's errors
 * keep neither the HTTP status nor `Retry-After` of a plain-text answer (Mattermost's rate limiter
 * answers 429 as `text/plain`), and its calls take no AbortSignal. Calls are paced by a token bucket
 * (`perSecond`; Mattermost's limiter, when enabled, allows 10/s per client address by default); a 429
 * becomes a retryable `platform_rate_limited` error carrying the server's wait.
 */
// A CommonJS package whose re-exports Node's ESM loader cannot see by name: import the whole module.
import mattermostClient from "@mattermost/client";
import { PlatformError } from "../../core/errors.js";
import { sleep } from "../../core/sleep.js";

/** One REST call's request. `body`: JSON, or a FormData (uploads). */
interface CallOptions {
  method?: "GET" | "POST" | "PUT" | "DELETE";
  body?: unknown;
  signal?: AbortSignal | undefined;
}

/** A failed REST call, with the HTTP status Mattermost answered. */
export class MattermostApiError extends PlatformError {
  readonly status: number;
  constructor(status: number, message: string, options: ConstructorParameters<typeof PlatformError>[2] = {}) {
    super("mattermost", message, options);
    this.name = "MattermostApiError";
    this.status = status;
  }
}

/** The REST side of the adapter. */
export class MattermostApi {
  readonly client = new mattermostClient.Client4();
  private tokens: number;
  private last = Date.now();
  private tail: Promise<void> = Promise.resolve();

  constructor(
    url: string,
    token: string,
    private readonly perSecond = 10,
  ) {
    this.client.setUrl(url.replace(/\/+$/, ""));
    this.client.setToken(token);
    // A server process: no browser cookies.
    this.client.setIncludeCookies(false);
    this.tokens = perSecond;
  }

  /** Milliseconds until a call could go without waiting. */
  waitMs(): number {
    this.refill();
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) / this.perSecond) * 1000);
  }

  private refill(): void {
    const now = Date.now();
    this.tokens = Math.min(this.perSecond, this.tokens + ((now - this.last) / 1000) * this.perSecond);
    this.last = now;
  }

  private take(signal?: AbortSignal): Promise<void> {
    const turn = this.tail.then(async () => {
      const wait = this.waitMs();
      if (wait > 0) await sleep(wait, signal);
      this.refill();
      this.tokens -= 1;
    });
    this.tail = turn.catch(() => undefined);
    return turn;
  }

  /** A route under `/api/v4`, e.g. `posts`, as an absolute URL. */
  route(path: string): string {
    return `${this.client.getBaseRoute()}/${path}`;
  }

  /** Calls `path` (under `/api/v4`) and returns its JSON. @throws PlatformError by status. */
  async call<T>(path: string, options: CallOptions = {}): Promise<T> {
    const response = await this.fetch(path, options);
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** Calls `path` and returns the raw response (downloads). @throws PlatformError by status. */
  async fetch(path: string, options: CallOptions = {}): Promise<Response> {
    await this.take(options.signal);
    const method = options.method ?? "GET";
    const isForm = options.body instanceof FormData;
    const init = this.client.getOptions({
      method,
      body: isForm ? options.body : options.body === undefined ? undefined : JSON.stringify(options.body),
    }) as RequestInit & { credentials?: RequestCredentials };
    let response: Response;
    try {
      response = await fetch(this.route(path), { ...init, signal: options.signal ?? null });
    } catch (err) {
      throw new PlatformError("mattermost", `Mattermost at ${this.client.getUrl()} did not answer.`, {
        cause: err,
        retryable: true,
      });
    }
    if (!response.ok) throw await errorOf(response, `${method} ${path.split("?")[0]}`);
    return response;
  }
}

/** The PlatformError for a failed response: 429 and 5xx retryable, 401 final and named. */
async function errorOf(response: Response, what: string): Promise<MattermostApiError> {
  const body = await response.text().catch(() => "");
  let message = body.trim().slice(0, 200);
  try {
    message = (JSON.parse(body) as { message?: string }).message ?? message;
  } catch {
    // A plain-text body (the rate limiter's "limit exceeded") stays as it is.
  }
  const status = response.status;
  if (status === 429) {
    const retryAfterMs = waitOf(response.headers);
    return new MattermostApiError(status, `Mattermost rate-limited ${what}: ${message}`, {
      code: "platform_rate_limited",
      retryable: true,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    });
  }
  if (status === 401) {
    return new MattermostApiError(
      status,
      `Mattermost refused MATTERMOST_TOKEN (401 on ${what}): the token was revoked or mistyped. Fix: create a new access token for the bot account (System Console → Integrations → Bot Accounts).`,
      { code: "platform_auth_failed" },
    );
  }
  return new MattermostApiError(status, `Mattermost answered ${status} to ${what}: ${message}`, {
    retryable: status >= 500,
  });
}

/** `Retry-After` (seconds) or `X-RateLimit-Reset` (seconds until the window resets), in ms. */
function waitOf(headers: Headers): number | undefined {
  for (const name of ["retry-after", "x-ratelimit-reset"]) {
    const seconds = Number(headers.get(name));
    if (headers.has(name) && Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
  }
  return undefined;
}
