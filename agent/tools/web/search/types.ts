/** The web search contract every provider implements. */

/** One search hit. `snippet` is plain text (providers' HTML highlighting removed). */
export interface WebSearchResult {
  title: string;
  url: string;
  snippet: string;
}

/** Per-call options of `WebSearchProvider.search`. */
export interface WebSearchOptions {
  /** Most results returned (each provider also has its own ceiling). @defaultValue 5 */
  limit?: number;
  /** Cancels the request; the call then rejects with a `WebSearchError` of code `turn_cancelled`. */
  signal?: AbortSignal;
}

/**
 * A web search backend. `search` resolves with at most `limit` results (an empty list when nothing
 * matched) and rejects with a `WebSearchError`: `platform_auth_failed` when the key is refused,
 * `platform_rate_limited` (retryable, with `retryAfterMs` when the provider said), `platform_error`
 * (retryable for 5xx, timeouts and unreachable hosts), `turn_cancelled` when `signal` fired.
 */
export interface WebSearchProvider {
  /** "searxng", "brave" or "tavily". */
  readonly name: string;
  search(query: string, options?: WebSearchOptions): Promise<WebSearchResult[]>;
}

/** What every provider constructor takes; `createWebSearchProvider` builds it from validated config. */
export interface WebSearchProviderConfig {
  /** API root; tests point it at a fake. Each provider documents its default. */
  baseUrl?: string;
  apiKey?: string;
  /** Time for one search request. @defaultValue 15_000 */
  timeoutMs?: number;
  /** The config path named in error messages, e.g. "web.search" → "set web.search.apiKey". @defaultValue "web.search" */
  configKey?: string;
}
