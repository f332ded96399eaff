/** Tavily search API: POST {baseUrl}/search, JSON body, key as `Authorization: Bearer tvly-…`. */
import { z } from "zod";
import { clampLimit, plainText, requestJson, WebSearchError } from "./http.js";
import type {
  WebSearchOptions,
  WebSearchProvider,
  WebSearchProviderConfig,
  WebSearchResult,
} from "./types.js";

/** The API root used when `baseUrl` is not set. */
export const TAVILY_BASE_URL = "https://api.tavily.com";

const responseSchema = z.object({
  results: z.array(
    z.object({ title: z.string().optional(), url: z.string(), content: z.string().optional() }),
  ),
});

/** Tavily search ("basic" depth, no generated answer). Keys from https://app.tavily.com. */
export class TavilySearchProvider implements WebSearchProvider {
  readonly name = "tavily";
  readonly #baseUrl: string;
  readonly #apiKey: string;
  readonly #timeoutMs: number;
  readonly #configKey: string;

  constructor(config: WebSearchProviderConfig & { apiKey: string }) {
    this.#baseUrl = (config.baseUrl ?? TAVILY_BASE_URL).replace(/\/+$/, "");
    this.#apiKey = config.apiKey;
    this.#timeoutMs = config.timeoutMs ?? 15_000;
    this.#configKey = config.configKey ?? "web.search";
  }

  /** See `WebSearchProvider.search`. At most 20 results (Tavily's ceiling for `max_results`). */
  async search(query: string, options: WebSearchOptions = {}): Promise<WebSearchResult[]> {
    const limit = clampLimit(options.limit, 20);
    const context = {
      label: "Tavily",
      name: this.name,
      timeoutMs: this.#timeoutMs,
      authFix: `the API key was refused or is out of credits; set a valid key (tvly-…) in ${this.#configKey}.apiKey (https://app.tavily.com)`,
    };
    const init: RequestInit = {
      method: "POST",
      headers: {
        accept: "application/json",
        "content-type": "application/json",
        authorization: `Bearer ${this.#apiKey}`,
      },
      body: JSON.stringify({ query, max_results: limit, search_depth: "basic", include_answer: false }),
    };
    const body = await requestJson(context, new URL(`${this.#baseUrl}/search`), init, options.signal);
    const parsed = responseSchema.safeParse(body);
    if (!parsed.success)
      throw new WebSearchError(this.name, "Tavily answered JSON without a results list", {
        cause: parsed.error,
      });
    return parsed.data.results.slice(0, limit).map((r) => ({
      title: plainText(r.title ?? r.url),
      url: r.url,
      snippet: plainText(r.content ?? ""),
    }));
  }
}
