/** Web search: the provider contract, the three providers and `createWebSearchProvider`. */
import { z } from "zod";
import { ConfigError } from "../../../../core/errors.js";
import { BraveSearchProvider } from "./brave.js";
import { SearxngSearchProvider } from "./searxng.js";
import { TavilySearchProvider } from "./tavily.js";
import type { WebSearchProvider } from "./types.js";

export { BRAVE_BASE_URL, BraveSearchProvider } from "./brave.js";
export { WebSearchError } from "./http.js";
export { SearxngSearchProvider } from "./searxng.js";
export { TAVILY_BASE_URL, TavilySearchProvider } from "./tavily.js";
export type * from "./types.js";

const PROVIDERS = ["searxng", "brave", "tavily"] as const;

/** The search settings: which provider, its API root (required for SearXNG) and key (Brave, Tavily). */
export const webSearchConfigSchema = z
  .object({
    provider: z.enum(PROVIDERS),
    baseUrl: z.url({ protocol: /^https?$/ }).optional(),
    apiKey: z.string().min(1).optional(),
    timeoutMs: z.number().int().positive().optional(),
  })
  .strict();

/** Validated search settings. */
export type WebSearchConfig = z.infer<typeof webSearchConfigSchema>;

/** Where to get a key, per provider, for the "missing key" message. */
const KEY_SOURCES = {
  brave: "https://api-dashboard.search.brave.com (a Search plan key)",
  tavily: "https://app.tavily.com (a key starting tvly-)",
} as const;

function issueMessage(key: string, issue: z.core.$ZodIssue, input: Record<string, unknown>): string {
  const field = String(issue.path[0] ?? "");
  const path = field ? `${key}.${field}` : key;
  if (issue.code === "unrecognized_keys")
    return `${key} has unknown key(s) ${issue.keys.join(", ")}: the keys are provider, baseUrl, apiKey, timeoutMs`;
  if (field === "provider")
    return input.provider === undefined
      ? `${path} is missing: set it to searxng, brave or tavily (or remove ${key} to turn web search off)`
      : `${path} is ${JSON.stringify(input.provider)}: set it to searxng, brave or tavily`;
  if (field === "baseUrl")
    return `${path} is not an http(s) URL: write it with the scheme, e.g. http://localhost:8080`;
  if (field === "timeoutMs") return `${path} must be a positive whole number of milliseconds`;
  return `${path}: ${issue.message}`;
}

/**
 * Builds the configured search provider, or undefined when search is not configured (`config` is
 * undefined, null, or an object whose fields are all unset or empty strings — blank environment
 * variables count as unset). Throws a `ConfigError` naming the key and the fix when the settings are
 * invalid: an unknown provider, a missing key for Brave or Tavily, a missing baseUrl for SearXNG.
 * @param configKey the settings' path, used in messages. @defaultValue "web.search"
 */
export function createWebSearchProvider(
  config: unknown,
  options: { configKey?: string } = {},
): WebSearchProvider | undefined {
  const key = options.configKey ?? "web.search";
  if (config === undefined || config === null) return undefined;
  if (typeof config !== "object" || Array.isArray(config))
    throw new ConfigError(key, `${key} must be an object with provider, baseUrl and apiKey`);
  const input = Object.fromEntries(Object.entries(config).filter(([, v]) => v !== undefined && v !== ""));
  if (Object.keys(input).length === 0) return undefined;
  const parsed = webSearchConfigSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = String(issue?.path[0] ?? "");
    throw new ConfigError(
      field ? `${key}.${field}` : key,
      issue ? issueMessage(key, issue, input) : `${key} is invalid`,
      {
        cause: parsed.error,
      },
    );
  }
  const { provider, baseUrl, apiKey, timeoutMs } = parsed.data;
  const common = { timeoutMs, configKey: key };
  if (provider === "searxng") {
    if (!baseUrl)
      throw new ConfigError(
        `${key}.baseUrl`,
        `${key}.baseUrl is required for searxng: the address of your instance, e.g. http://localhost:8080, ` +
          `with "json" listed under search.formats in its settings.yml`,
      );
    return new SearxngSearchProvider({ ...common, baseUrl, apiKey });
  }
  if (!apiKey)
    throw new ConfigError(
      `${key}.apiKey`,
      `${key}.apiKey is required for ${provider}: get one at ${KEY_SOURCES[provider]} and set it there`,
    );
  return provider === "brave"
    ? new BraveSearchProvider({ ...common, baseUrl, apiKey })
    : new TavilySearchProvider({ ...common, baseUrl, apiKey });
}
