/**
 * The transports of a process, one per wire protocol, each made on first use with its vendor's SDK:
 * the chat transport (and the openai SDK, ~160 ms and ~13 MB) with the first model request rather
 * than at start, the others only when a configured provider speaks their protocol. After the first
 * request a transport is returned without a promise.
 */
import { MODEL_APIS, type ModelApi, type ModelTransport, type TransportOptions } from "./types.js";

/** The protocols this build speaks (`providers[].api` accepts these). */
export const AVAILABLE_APIS: readonly ModelApi[] = MODEL_APIS;

type Factory = (options: TransportOptions) => Promise<ModelTransport>;

/** How each protocol's transport is made (a dynamic import keeps its SDK out of the start-up path). */
const factories: Record<ModelApi, Factory> = {
  "openai-chat": async (options) => (await import("./openai-chat.js")).createOpenAIChatTransport(options),
  anthropic: async (options) => (await import("./anthropic.js")).createAnthropicTransport(options),
  "openai-responses": async (options) =>
    (await import("./openai-responses.js")).createOpenAIResponsesTransport(options),
  gemini: async (options) => (await import("./gemini.js")).createGeminiTransport(options),
  bedrock: async (options) => (await import("./bedrock.js")).createBedrockTransport(options),
};

/** The transports of one model client. */
export class TransportSet {
  readonly #options: TransportOptions;
  readonly #made = new Map<ModelApi, ModelTransport | Promise<ModelTransport>>();

  constructor(options: TransportOptions) {
    this.#options = options;
  }

  /** The transport of `api`, made (and its SDK loaded) on first use. @throws when the build lacks it */
  get(api: ModelApi): ModelTransport | Promise<ModelTransport> {
    let made = this.#made.get(api);
    if (!made) {
      const pending = factories[api](this.#options);
      made = pending;
      this.#made.set(api, pending);
      pending.then(
        (t) => this.#made.set(api, t),
        () => this.#made.delete(api),
      );
    }
    return made;
  }
}
