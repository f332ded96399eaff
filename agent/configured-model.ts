/**
 * The model as the configuration names it: the provider catalog of `providers:` plus the legacy
 * endpoint (`OPENAI_BASE_URL`), checked for references that name no provider, and the model client on
 * it that gateway, worker, review and `/compress` share.
 */
import { ConfigError } from "../core/errors.js";
import {
  createModelClient,
  legacyProvider,
  type ModelClient,
  type ModelClientConfig,
} from "./model-client.js";
import { ProviderCatalog, type ProviderSpec } from "./providers/index.js";

/** The settings the catalog and the model client read (`HeraldConfig` has this shape). */
export interface ModelSettings {
  providers: readonly ProviderSpec[];
  model: Omit<ModelClientConfig, "catalog" | "retryBaseDelayMs"> & { default?: string | undefined };
  auxiliary: { compression?: string | undefined; review?: string | undefined };
}

/**
 * The catalog of the configured providers plus the legacy endpoint. @throws ConfigError for a model
 * reference naming no provider.
 */
export function createCatalog(config: ModelSettings): ProviderCatalog {
  const catalog = new ProviderCatalog({
    providers: config.providers,
    legacy: legacyProvider(config.model),
    defaultModel: config.model.default ?? config.model.name,
    contextTokens: config.model.contextTokens,
    vision: config.model.vision,
  });
  if (config.providers.length) {
    const names = new Set(config.providers.map((p) => p.name));
    const refs: [string, string | undefined][] = [
      ["model.default", config.model.default],
      ...config.model.fallbacks.map((f, i): [string, string] => [`model.fallbacks.${i}`, f]),
      ["auxiliary.compression", config.auxiliary.compression],
      ["auxiliary.review", config.auxiliary.review],
    ];
    for (const [key, ref] of refs) {
      if (!ref) continue;
      const slash = ref.indexOf("/");
      const declared = config.providers.some((p) => p.models.some((m) => m.name === ref));
      if (!declared && slash > 0 && !names.has(ref.slice(0, slash)) && !names.has("default")) {
        throw new ConfigError(
          key,
          `config.yaml: ${key} is '${ref}', but no provider is named '${ref.slice(0, slash)}' (providers: ${[...names].join(", ")}). Fix: write it as <provider>/<model> with one of those names.`,
        );
      }
    }
  }
  return catalog;
}

/** The model client of this process on the configured providers. */
export function createConfiguredModelClient(
  config: ModelSettings,
  options: { retryBaseDelayMs?: number | undefined } = {},
): ModelClient {
  return createModelClient({
    ...config.model,
    name: config.model.default ?? config.model.name,
    catalog: createCatalog(config),
    retryBaseDelayMs: options.retryBaseDelayMs,
  });
}
