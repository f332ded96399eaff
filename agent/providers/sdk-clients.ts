/**
 * One vendor SDK client per provider, made on first use with the settings every transport gives its
 * SDK alike: the provider's base URL, key and headers, no SDK retries (the model client retries), the
 * process's timeout and keep-alive fetch.
 */
import type { ProviderSpec, TransportOptions } from "./types.js";

/** What the OpenAI and Anthropic SDK clients take, as every transport sets it. */
export interface SdkClientSettings {
  baseURL: string;
  apiKey: string;
  maxRetries: 0;
  timeout: number;
  fetch: TransportOptions["fetch"];
  defaultHeaders: Record<string, string> | undefined;
}

/** The client of a provider, made by `make` the first time that provider is asked for. */
export function clientPerProvider<T>(
  options: TransportOptions,
  make: (settings: SdkClientSettings) => T,
): (provider: ProviderSpec) => T {
  const clients = new Map<string, T>();
  return (provider) => {
    let client = clients.get(provider.name);
    if (!client) {
      client = make({
        baseURL: provider.baseUrl,
        // Local servers (Ollama, llama.cpp) take any key; the SDKs insist on one.
        apiKey: provider.apiKey ?? "not-set",
        maxRetries: 0,
        timeout: options.timeoutMs,
        fetch: options.fetch,
        defaultHeaders: provider.headers ? { ...provider.headers } : undefined,
      });
      clients.set(provider.name, client);
    }
    return client;
  };
}
