/**
 * Model providers: the catalog (`provider/model` references, context windows, prices, reasoning,
 * cache markers), the transports (one `ModelTransport` per wire protocol: OpenAI Chat Completions,
 * OpenAI Responses, Anthropic Messages, Gemini, Amazon Bedrock's Converse; each SDK loaded on first use), each session's model settings, and `/model`,
 * `/reasoning`, `/usage`.
 */
export {
  apiOf,
  LEGACY_PROVIDER,
  ProviderCatalog,
  type ProviderCatalogOptions,
  wantsCacheMarkers,
} from "./catalog.js";
export { type ProviderCommandsOptions, providerCommands } from "./commands.js";
export {
  CONTEXT_TOO_LONG,
  cancelledError,
  retryAfterMs,
  TransportFailure,
} from "./failures.js";
export {
  createProviders,
  type ProvidersConfig,
  type ProvidersGateway,
  type ProvidersPorts,
  type SessionModels,
} from "./gateway.js";
// The chat transport itself (and the openai SDK with it) is imported where it is made: transports.ts.
export { requestBody, withCacheMarkers } from "./openai-chat-body.js";
export { SESSION_MODELS_NAMESPACE, SessionModelStore } from "./settings.js";
export { AVAILABLE_APIS, TransportSet } from "./transports.js";
export type * from "./types.js";
export { type UsageReportOptions, usageReport, usageText } from "./usage-text.js";
