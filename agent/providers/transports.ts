/**
 * The transports of a process, one per wire protocol, each made on first use: the chat transport
 * at once (every install has it), the others with their vendor's SDK loaded only when a configured
 * provider speaks their protocol.
 */
import { createOpenAIChatTransport } from "./openai-chat.js";
import { MODEL_APIS, type ModelApi, type ModelTransport, type TransportOptions } from "./types.js";

/** The protocols this build speaks (`providers[].api` accepts these). */
export const AVAILABLE_APIS: readonly ModelApi[] = MODEL_APIS;

type Factory = (options: TransportOptions) => Promise<ModelTransport>;

/** How each protocol's transport is made (a dynamic import keeps its SDK out of the start-up path). */
const factories: Record<ModelApi, Factory> = {
  "openai-chat": async (options) => createOpenAIChatTransport(options),
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
    // The chat transport is the fast path: made now, returned without a promise.
    this.#made.set("openai-chat", createOpenAIChatTransport(options));
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
