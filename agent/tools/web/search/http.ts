/** The HTTP exchange shared by the search providers, and the classification of its failures. */
import { HeraldError, type HeraldErrorCode } from "../../../../core/errors.js";

/** A search provider failed. `status` is the HTTP status when there was one; `retryAfterMs` when the provider said. */
export class WebSearchError extends HeraldError {
  readonly provider: string;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  constructor(
    provider: string,
    message: string,
    options: {
      code?: HeraldErrorCode;
      cause?: unknown;
      retryable?: boolean;
      status?: number;
      retryAfterMs?: number;
    },
  ) {
    super(message, {
      code: options.code ?? "platform_error",
      cause: options.cause,
      retryable: options.retryable,
    });
    this.name = "WebSearchError";
    this.provider = provider;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** What a provider tells `requestJson` about itself, for the error messages. */
export interface ProviderContext {
  /** Display name, e.g. "Brave Search". */
  label: string;
  /** Short name, e.g. "brave". */
  name: string;
  timeoutMs: number;
  /** Says how to fix a 401/403, e.g. "set a valid key in web.search.apiKey". */
  authFix: string;
}

/** Milliseconds from Retry-After (seconds or an HTTP date), else the first figure of X-RateLimit-Reset. */
export function retryAfterMs(headers: Headers, nowMs = Date.now()): number | undefined {
  const retryAfter = headers.get("retry-after");
  if (retryAfter) {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
    const at = Date.parse(retryAfter);
    if (Number.isFinite(at)) return Math.max(0, at - nowMs);
  }
  // Brave sends "X-RateLimit-Reset: 1, 1419704": seconds until the per-second and the monthly windows reset.
  const reset = Number(headers.get("x-ratelimit-reset")?.split(",")[0]);
  return Number.isFinite(reset) && reset >= 0 ? reset * 1000 : undefined;
}

function classifyStatus(context: ProviderContext, response: Response, body: string): WebSearchError {
  const { label, name } = context;
  const status = response.status;
  if (status === 401 || status === 403)
    return new WebSearchError(name, `${label} refused the request (HTTP ${status}): ${context.authFix}`, {
      code: "platform_auth_failed",
      status,
    });
  if (status === 429) {
    const waitMs = retryAfterMs(response.headers);
    const when = waitMs === undefined ? "later" : `in ${Math.ceil(waitMs / 1000)} s`;
    return new WebSearchError(name, `${label} is rate-limiting searches (HTTP 429); try again ${when}`, {
      code: "platform_rate_limited",
      status,
      retryable: true,
      retryAfterMs: waitMs,
    });
  }
  const detail = body.replace(/\s+/g, " ").trim().slice(0, 200);
  return new WebSearchError(name, `${label} answered HTTP ${status}${detail ? `: ${detail}` : ""}`, {
    status,
    retryable: status >= 500,
  });
}

/**
 * Sends one request and returns the parsed JSON body. Rejects with a classified `WebSearchError`
 * (see `WebSearchProvider`); never logs, and never puts request headers (the key) in a message.
 */
export async function requestJson(
  context: ProviderContext,
  url: URL,
  init: RequestInit,
  signal: AbortSignal | undefined,
): Promise<unknown> {
  const timeout = AbortSignal.timeout(context.timeoutMs);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  let response: Response;
  let body: string;
  try {
    response = await fetch(url, { ...init, signal: combined });
    body = await response.text();
  } catch (err) {
    if (signal?.aborted)
      throw new WebSearchError(context.name, `the ${context.label} search was cancelled`, {
        code: "turn_cancelled",
        cause: err,
      });
    const what = timeout.aborted
      ? `did not answer within ${context.timeoutMs / 1000} s`
      : "could not be reached";
    throw new WebSearchError(context.name, `${context.label} at ${url.origin} ${what}; try again later`, {
      cause: err,
      retryable: true,
    });
  }
  if (!response.ok) throw classifyStatus(context, response, body);
  try {
    return JSON.parse(body);
  } catch (err) {
    throw new WebSearchError(context.name, `${context.label} answered with something that is not JSON`, {
      cause: err,
      status: response.status,
    });
  }
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };

/** Plain text of a provider snippet: tags (Brave's <strong>) removed, common entities decoded, spaces collapsed. */
export function plainText(html: string): string {
  return html
    .replace(/<[^>]*>/g, "")
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (match, name: string) => {
      if (!name.startsWith("#")) return ENTITIES[name.toLowerCase()] ?? match;
      const code = /^#x/i.test(name) ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : match;
    })
    .replace(/\s+/g, " ")
    .trim();
}

/** A clean limit: an integer in [1, ceiling]. */
export function clampLimit(limit: number | undefined, ceiling: number): number {
  return Math.min(ceiling, Math.max(1, Math.floor(limit ?? 5)));
}
