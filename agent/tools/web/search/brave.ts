/** Brave Search API: GET {baseUrl}/res/v1/web/search?q=…&count=… with the key in X-Subscription-Token. */
import { z } from "zod";
import { clampLimit, plainText, requestJson, WebSearchError } from "./http.js";
import type {
  WebSearchOptions,
  WebSearchProvider,
  WebSearchProviderConfig,
  WebSearchResult,
} from "./types.js";

/** The API root used when `baseUrl` is not set. */
export const BRAVE_BASE_URL = "https://api.search.brave.com";

// `web` is absent when nothing matched (the answer then holds only `query` and `type`).
const responseSchema = z.object({
  web: z
    .object({
      results: z.array(
        z.object({ title: z.string().optional(), url: z.string(), description: z.string().optional() }),
      ),
    })
    .optional(),
});

/** Brave Search (web results). Needs a "Search" plan key from https://api-dashboard.search.brave.com. */
export class BraveSearchProvider implements WebSearchProvider {
  readonly name = "brave";
  readonly #baseUrl: string;
  readonly #apiKey: string;
  readonly #timeoutMs: number;
  readonly #configKey: string;

  constructor(config: WebSearchProviderConfig & { apiKey: string }) {
    this.#baseUrl = (config.baseUrl ?? BRAVE_BASE_URL).replace(/\/+$/, "");
    this.#apiKey = config.apiKey;
    this.#timeoutMs = config.timeoutMs ?? 15_000;
    this.#configKey = config.configKey ?? "web.search";
  }

  /** See `WebSearchProvider.search`. At most 20 results (Brave's ceiling for `count`). */
  async search(query: string, options: WebSearchOptions = {}): Promise<WebSearchResult[]> {
    const url = new URL(`${this.#baseUrl}/res/v1/web/search`);
    url.searchParams.set("q", query);
    url.searchParams.set("count", String(clampLimit(options.limit, 20)));
    const context = {
      label: "Brave Search",
      name: this.name,
      timeoutMs: this.#timeoutMs,
      authFix:
        `the API key was refused; set a valid key in ${this.#configKey}.apiKey ` +
        "(https://api-dashboard.search.brave.com, a Search plan: Data for AI keys are not accepted here)",
    };
    const headers = {
      accept: "application/json",
      "accept-encoding": "gzip",
      "x-subscription-token": this.#apiKey,
    };
    const body = await requestJson(context, url, { headers }, options.signal);
    const parsed = responseSchema.safeParse(body);
    if (!parsed.success)
      throw new WebSearchError(this.name, "Brave Search answered JSON in an unexpected shape (web.results)", {
        cause: parsed.error,
      });
    return (parsed.data.web?.results ?? []).slice(0, clampLimit(options.limit, 20)).map((r) => ({
      title: plainText(r.title ?? r.url),
      url: r.url,
      snippet: plainText(r.description ?? ""),
    }));
  }
}
