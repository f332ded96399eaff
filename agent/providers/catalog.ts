/**
 * The provider catalog: resolves model references to a provider and the model's declared abilities,
 * lists what `/model` offers, and prices usage. A reference is `provider/model` (split at the first
 * slash when the prefix names a provider), or a bare model name: the provider that declares it, else
 * the legacy endpoint (`model.base_url`, named `default`).
 */
import type { ModelUsage } from "../../core/turn.js";
import type { ModelApi, ProviderModel, ProviderSpec, ResolvedModel } from "./types.js";

/** The name of the provider built from the single legacy endpoint (`OPENAI_BASE_URL`). */
export const LEGACY_PROVIDER = "default";

export interface ProviderCatalogOptions {
  providers: readonly ProviderSpec[];
  /** The legacy endpoint, used for bare names no provider declares. */
  legacy?: ProviderSpec | undefined;
  /** The default model reference (`model.default`). */
  defaultModel: string;
  /** Context window of models that declare none. */
  contextTokens: number;
  /** Image input of models that declare nothing. */
  vision: boolean;
}

export class ProviderCatalog {
  readonly #byName = new Map<string, ProviderSpec>();
  readonly #options: ProviderCatalogOptions;

  constructor(options: ProviderCatalogOptions) {
    this.#options = options;
    if (options.legacy) this.#byName.set(options.legacy.name, options.legacy);
    // A configured provider named like the legacy one replaces it.
    for (const p of options.providers) this.#byName.set(p.name, p);
  }

  /** The default model's canonical reference. */
  get defaultModel(): string {
    return this.resolve(this.#options.defaultModel)?.ref ?? this.#options.defaultModel;
  }

  /** Every provider, legacy endpoint included. */
  providers(): ProviderSpec[] {
    return [...this.#byName.values()];
  }

  /** Resolves a reference, or undefined when nothing can serve it (no legacy endpoint, unknown name). */
  resolve(ref: string): ResolvedModel | undefined {
    const slash = ref.indexOf("/");
    if (slash > 0) {
      const provider = this.#byName.get(ref.slice(0, slash));
      if (provider) return this.#resolved(provider, ref.slice(slash + 1));
    }
    for (const provider of this.#options.providers) {
      if (provider.models.some((m) => m.name === ref)) return this.#resolved(provider, ref);
    }
    const legacy = this.#options.legacy;
    return legacy ? this.#resolved(legacy, ref) : undefined;
  }

  /** Every declared model (the legacy endpoint's default model too), for `/model`. */
  list(): ResolvedModel[] {
    const out: ResolvedModel[] = [];
    for (const provider of this.#byName.values()) {
      for (const m of provider.models) out.push(this.#resolved(provider, m.name));
    }
    const fallback = this.resolve(this.#options.defaultModel);
    if (fallback && !out.some((m) => m.ref === fallback.ref)) out.unshift(fallback);
    return out;
  }

  /** Context window of a model in tokens. */
  contextTokens(ref: string): number {
    return this.resolve(ref)?.info?.contextTokens ?? this.#options.contextTokens;
  }

  /** Whether a model accepts images. */
  vision(ref: string): boolean {
    return this.resolve(ref)?.info?.vision ?? this.#options.vision;
  }

  /** Estimated cost in US dollars, or undefined when the model has no declared price. */
  costOf(
    usage: Pick<
      ModelUsage,
      "model" | "promptTokens" | "completionTokens" | "cachedTokens" | "cacheWriteTokens"
    >,
  ) {
    const price = this.resolve(usage.model)?.info?.price;
    if (!price) return undefined;
    const cached = Math.min(usage.cachedTokens, usage.promptTokens);
    const written = Math.min(usage.cacheWriteTokens ?? 0, usage.promptTokens - cached);
    return (
      ((usage.promptTokens - cached - written) * price.input +
        cached * (price.cached ?? price.input) +
        written * (price.cacheWrite ?? price.input) +
        usage.completionTokens * price.output) /
      1_000_000
    );
  }

  /** Whether `provider` is the legacy endpoint (its errors name OPENAI_BASE_URL and OPENAI_API_KEY). */
  isLegacy(provider: ProviderSpec): boolean {
    return provider === this.#options.legacy && this.#byName.get(provider.name) === provider;
  }

  #resolved(provider: ProviderSpec, model: string): ResolvedModel {
    const info = provider.models.find((m) => m.name === model);
    // The legacy endpoint's models keep their bare names, as before providers existed.
    const ref = this.isLegacy(provider) ? model : `${provider.name}/${model}`;
    return { ref, provider, model, info };
  }
}

/** Whether requests to this model carry `cache_control` markers (declared, or Anthropic on OpenRouter). */
export function wantsCacheMarkers(resolved: ResolvedModel): boolean {
  const declared: ProviderModel["cacheControl"] = resolved.info?.cacheControl;
  if (declared !== undefined) return declared;
  return (
    /(^|\.)openrouter\.ai$/.test(hostOf(resolved.provider.baseUrl)) && resolved.model.startsWith("anthropic/")
  );
}

/** Host names of the configured base URLs, parsed once each (every model request asks). */
const hosts = new Map<string, string>();

function hostOf(url: string): string {
  let host = hosts.get(url);
  if (host === undefined) {
    try {
      host = new URL(url).hostname;
    } catch {
      host = "";
    }
    if (hosts.size < 256) hosts.set(url, host);
  }
  return host;
}

/**
 * The wire protocol of a provider: its `api`, else read from its base URL (Anthropic's, Google's
 * Generative Language and Bedrock's runtime hosts), else OpenAI Chat Completions.
 */
export function apiOf(provider: Pick<ProviderSpec, "api" | "baseUrl">): ModelApi {
  if (provider.api) return provider.api;
  // Asked on every model call: the URL is parsed once per provider.
  let api = apiByProvider.get(provider);
  if (!api) {
    api = apiOfUrl(provider.baseUrl);
    apiByProvider.set(provider, api);
  }
  return api;
}

const apiByProvider = new WeakMap<object, ModelApi>();

function apiOfUrl(baseUrl: string): ModelApi {
  const host = hostOf(baseUrl);
  if (host === "api.anthropic.com") return "anthropic";
  if (host === "generativelanguage.googleapis.com") return "gemini";
  if (/^bedrock-runtime(-fips)?\.[a-z0-9-]+\.amazonaws\.com$/.test(host)) return "bedrock";
  return "openai-chat";
}
