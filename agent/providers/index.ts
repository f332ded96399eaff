/**
 * Model providers: the catalog (`provider/model` references, context windows, prices, reasoning,
 * cache markers), each session's model settings, and `/model`, `/reasoning`, `/usage`.
 */
export {
  LEGACY_PROVIDER,
  ProviderCatalog,
  type ProviderCatalogOptions,
  wantsCacheMarkers,
} from "./catalog.js";
export { type ProviderCommandsOptions, providerCommands, usageText } from "./commands.js";
export {
  createProviders,
  type ProvidersConfig,
  type ProvidersGateway,
  type ProvidersPorts,
  type SessionModels,
} from "./gateway.js";
export { SESSION_MODELS_NAMESPACE, SessionModelStore } from "./settings.js";
export type * from "./types.js";
