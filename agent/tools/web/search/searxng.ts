/** SearXNG (self-hosted metasearch) through its JSON search API: GET {baseUrl}/search?q=…&format=json. */
import { z } from "zod";
import { clampLimit, plainText, requestJson, WebSearchError } from "./http.js";
import type {
  WebSearchOptions,
  WebSearchProvider,
  WebSearchProviderConfig,
  WebSearchResult,
} from "./types.js";

const responseSchema = z.object({
  results: z.array(
    z.object({ title: z.string().optional(), url: z.string(), content: z.string().optional() }),
  ),
});

/**
 * A SearXNG instance. `baseUrl` is required (there is no public default; most public instances disable
 * JSON). The instance must list `json` under `search.formats` in its settings.yml, else it answers 403.
 * SearXNG takes no result count, so the first `limit` results of page 1 are kept.
 */
export class SearxngSearchProvider implements WebSearchProvider {
  readonly name = "searxng";
  readonly #baseUrl: string;
  readonly #apiKey: string | undefined;
  readonly #timeoutMs: number;
  readonly #configKey: string;

  constructor(config: WebSearchProviderConfig & { baseUrl: string }) {
    this.#baseUrl = config.baseUrl.replace(/\/+$/, "");
    this.#apiKey = config.apiKey;
    this.#timeoutMs = config.timeoutMs ?? 15_000;
    this.#configKey = config.configKey ?? "web.search";
  }

  /** See `WebSearchProvider.search`. At most 20 results (one SearXNG page). */
  async search(query: string, options: WebSearchOptions = {}): Promise<WebSearchResult[]> {
    const url = new URL(`${this.#baseUrl}/search`);
    url.searchParams.set("q", query);
    url.searchParams.set("format", "json");
    url.searchParams.set("pageno", "1");
    const headers: Record<string, string> = { accept: "application/json" };
    // SearXNG has no keys of its own; an instance behind an authenticating proxy may want a bearer token.
    if (this.#apiKey) headers.authorization = `Bearer ${this.#apiKey}`;
    const context = {
      label: "SearXNG",
      name: this.name,
      timeoutMs: this.#timeoutMs,
      authFix:
        `the instance at ${this.#baseUrl} refuses JSON searches: add "json" to search.formats in its ` +
        `settings.yml, or, if a proxy guards it, set ${this.#configKey}.apiKey to a token the proxy accepts`,
    };
    const body = await requestJson(context, url, { headers }, options.signal);
    const parsed = responseSchema.safeParse(body);
    if (!parsed.success)
      throw new WebSearchError(
        this.name,
        `SearXNG at ${this.#baseUrl} answered JSON without a results list`,
        {
          cause: parsed.error,
        },
      );
    return parsed.data.results.slice(0, clampLimit(options.limit, 20)).map((r) => ({
      title: plainText(r.title ?? r.url),
      url: r.url,
      snippet: plainText(r.content ?? ""),
    }));
  }
}
