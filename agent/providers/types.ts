/**
 * Contracts of model providers: where each model is served (base URL, key, extra headers), what it
 * costs and can do, and how a model reference (`provider/model`) names one. The catalog
 * (`agent/providers/catalog.ts`) resolves references; the model client (agent/) sends the requests.
 */

/** US dollars per million tokens. `cached` prices prompt tokens the provider served from its cache. */
export interface ModelPrice {
  input: number;
  output: number;
  /** @defaultValue the `input` price */
  cached?: number | undefined;
}

/** One model a provider serves, as config.yaml declares it. */
export interface ProviderModel {
  name: string;
  /** Context window in tokens. @defaultValue model.context_tokens */
  contextTokens?: number | undefined;
  price?: ModelPrice | undefined;
  /** Accepts `reasoning_effort` (low, medium, high). @defaultValue false */
  reasoning?: boolean | undefined;
  /** Accepts image input. @defaultValue model.vision */
  vision?: boolean | undefined;
  /**
   * Wants explicit prompt-cache markers (`cache_control`) on the system prompt and the last stable
   * message. @defaultValue true for `anthropic/*` models on an OpenRouter base URL, else false
   */
  cacheControl?: boolean | undefined;
}

/** One OpenAI-compatible endpoint. The key is resolved from the environment by the config loader. */
export interface ProviderSpec {
  name: string;
  baseUrl: string;
  /** The key itself (never logged). Absent for local servers that need none. */
  apiKey?: string | undefined;
  /** The env variable the key came from, for error messages ("check OPENROUTER_API_KEY"). */
  apiKeyEnv?: string | undefined;
  /** Extra request headers (OpenRouter's `HTTP-Referer`, `X-Title`). */
  headers?: Readonly<Record<string, string>> | undefined;
  models: readonly ProviderModel[];
}

/** A model reference resolved to its provider. `ref` is the canonical `provider/model`. */
export interface ResolvedModel {
  ref: string;
  provider: ProviderSpec;
  /** The model name as the provider knows it (may hold slashes: `anthropic/claude-sonnet-4`). */
  model: string;
  /** What config.yaml declares of it; undefined for a model the provider serves but config does not list. */
  info?: ProviderModel | undefined;
}

/** Reasoning effort asked of models that declare support; `off` sends no effort (the provider's default). */
export type ReasoningEffort = "low" | "medium" | "high";

/** The reasoning settings `/reasoning` accepts. */
export const REASONING_SETTINGS = ["low", "medium", "high", "off"] as const;

/** What a session may override: its model and its reasoning effort (kept by session id). */
export interface SessionModelSettings {
  model?: string | undefined;
  reasoning?: ReasoningEffort | "off" | undefined;
}

export type { ProviderAlert } from "../../core/turn.js";
