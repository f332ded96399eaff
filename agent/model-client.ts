/**
 * The model client: one assistant answer from the configured models, whatever protocol each speaks
 * (one `ModelTransport` per protocol, agent/providers/), with retries (p-retry: exponential backoff
 * with jitter, Retry-After honoured) and a fallback chain that may cross providers and protocols: the
 * session's messages are the chat-completions shape, which every transport converts.
 */

import pRetry, { AbortError as RetryAbort } from "p-retry";
import { ModelError } from "../core/errors.js";
import { createNodeFetch } from "../core/node-fetch.js";
import { sleep } from "../core/sleep.js";
import type { ProviderAlert } from "../core/turn.js";
import type { AssistantMessage } from "../core/types.js";
import { modelConfigProblem } from "./model-config.js";
import { cancelledError, toModelError } from "./model-errors.js";
import {
  type AttemptFailure,
  apiOf,
  LEGACY_PROVIDER,
  type ModelMessage,
  type ModelTool,
  type ModelTransport,
  ProviderCatalog,
  type ProviderSpec,
  type ReasoningEffort,
  type ResolvedModel,
  type TokenUsage,
  TransportSet,
} from "./providers/index.js";

export type { ModelMessage } from "./providers/index.js";
export { requestBody, withCacheMarkers } from "./providers/index.js";

/** What the client needs of the `model` config section, plus retry timing (tests shorten it). */
export interface ModelClientConfig {
  /** The legacy endpoint (`OPENAI_BASE_URL`), provider `default`. */
  baseUrl: string;
  /** The default model when no catalog is given. */
  name: string;
  /** Model references tried in order when the requested one fails after its retries (any provider). */
  fallbacks: string[];
  /** The providers and their models. @defaultValue the legacy endpoint alone, serving any model name */
  catalog?: ProviderCatalog | undefined;
  /** The model's context window in tokens; compression starts near it. */
  contextTokens: number;
  maxIterations: number;
  timeoutMs: number;
  maxRetries: number;
  /** Whether the model accepts image input. */
  vision: boolean;
  apiKey?: string | undefined;
  /** First retry delay; doubles each retry, times a random 1–2 (jitter). @defaultValue 1000 */
  retryBaseDelayMs?: number | undefined;
  /** Cap of one backoff delay. @defaultValue 30_000 */
  retryMaxDelayMs?: number | undefined;
  /** A Retry-After longer than this is not waited for: the attempt fails at once. @defaultValue 60_000 */
  maxRetryAfterMs?: number | undefined;
}

export interface StreamChatRequest {
  /** A model reference (`provider/model` or a bare name). @defaultValue the catalog's default model */
  model?: string | undefined;
  /** Sent as `reasoning_effort` to models that declare `reasoning: true`; ignored for others. */
  reasoningEffort?: ReasoningEffort | undefined;
  /**
   * How many leading messages are the same as in the session's previous request (system prompt and
   * stored history). The last of them gets a cache marker where the model wants markers.
   */
  stableCount?: number | undefined;
  /** Told when a provider refuses its key (401/403) before the chain goes on. Must not throw. */
  onAlert?: ((alert: ProviderAlert) => void) | undefined;
  messages: ModelMessage[];
  tools?: readonly ModelTool[] | undefined;
  signal?: AbortSignal | undefined;
  /** Called with each piece of assistant text as it streams. Must not throw. */
  onTextDelta?: ((text: string) => void) | undefined;
}

export interface StreamChatResult {
  message: AssistantMessage;
  usage: TokenUsage;
  /** The model that answered (a fallback when the main one failed), as its reference. */
  model: string;
  finishReason: string | undefined;
}

/** Streams chat completions from the configured endpoint. */
export interface ModelClient {
  readonly config: ModelClientConfig;
  /** The providers and models this client reaches. */
  readonly catalog: ProviderCatalog;
  /**
   * One assistant answer. Retries 429, 5xx, connection errors and timeouts, then tries each fallback
   * model. A failure after text was already streamed is not retried (the text is out).
   * @throws ModelError with a user-phrased message and `retryable` set.
   * @throws HeraldError `turn_cancelled` when `signal` fires (no retry after that).
   */
  streamChat(request: StreamChatRequest): Promise<StreamChatResult>;
}

/** Builds the client; one per process (it keeps the connection pool). */
export function createModelClient(config: ModelClientConfig): ModelClient {
  const catalog =
    config.catalog ??
    new ProviderCatalog({
      providers: [],
      legacy: legacyProvider(config),
      defaultModel: config.name,
      contextTokens: config.contextTokens,
      vision: config.vision,
    });
  const transports = new TransportSet({ timeoutMs: config.timeoutMs, fetch: createNodeFetch() });

  /** One streaming attempt against one model through its protocol's transport. */
  async function attempt(
    transport: ModelTransport,
    target: ResolvedModel,
    request: StreamChatRequest,
    emitted: { any: boolean },
  ) {
    const onTextDelta = request.onTextDelta;
    const answer = await transport.stream(target, {
      messages: request.messages,
      tools: request.tools,
      reasoningEffort: request.reasoningEffort,
      stableCount: request.stableCount,
      signal: request.signal,
      onTextDelta: (text) => {
        emitted.any = true;
        onTextDelta?.(text);
      },
    });
    const result: StreamChatResult = { ...answer, model: target.ref };
    return result;
  }

  return {
    config,
    catalog,
    async streamChat(request) {
      const signal = request.signal;
      const wanted = request.model ?? catalog.defaultModel;
      const first = catalog.resolve(wanted);
      if (!first) {
        throw new ModelError(
          `No configured provider serves the model '${wanted}'. Fix: name it as provider/model with a provider from config.yaml's providers (/model lists them).`,
          { retryable: false },
        );
      }
      // Nothing to retry when nothing is configured: say so at once (a fresh install's first turn).
      const missing = first.provider.name === LEGACY_PROVIDER ? modelConfigProblem(config) : undefined;
      if (missing) throw new ModelError(missing, { code: "config_missing", retryable: false });
      const chain = [first];
      for (const ref of config.fallbacks) {
        const next = catalog.resolve(ref);
        if (next && !chain.some((c) => c.ref === next.ref)) chain.push(next);
      }
      const tried: string[] = [];
      const refused = new Set<string>();
      let attempts = 0;
      let lastError: ModelError | undefined;
      const emitted = { any: false };

      for (const target of chain) {
        // A provider that rejected its key (401) rejects it for every model: skip its other models.
        if (refused.has(target.provider.name)) continue;
        tried.push(target.ref);
        let failure: AttemptFailure | undefined;
        let transport: ModelTransport;
        try {
          const made = transports.get(apiOf(target.provider));
          transport = made instanceof Promise ? await made : made;
        } catch (err) {
          throw new ModelError(
            `Provider '${target.provider.name}' speaks ${apiOf(target.provider)}, which cannot be loaded (${(err as Error).message}). Fix: reinstall Herald's dependencies (npm install) or set another api for it in config.yaml.`,
            { code: "config_missing", retryable: false, cause: err },
          );
        }
        try {
          return await pRetry(
            async () => {
              attempts++;
              try {
                return await attempt(transport, target, request, emitted);
              } catch (err) {
                if (signal?.aborted) throw new RetryAbort(cancelledError(signal.reason));
                failure = transport.classify(err);
                // Text already shown to the user cannot be taken back: no retry after it.
                // A plain Error: p-retry would not retry a TypeError (fetch's "terminated").
                const plain = new Error(failure.detail);
                if (!failure.retry || emitted.any) throw new RetryAbort(plain);
                throw plain;
              }
            },
            {
              retries: config.maxRetries,
              factor: 2,
              minTimeout: config.retryBaseDelayMs ?? 1000,
              maxTimeout: config.retryMaxDelayMs ?? 30_000,
              randomize: true,
              signal,
              shouldRetry: async () => {
                const waitMs = failure?.retryAfterMs;
                if (waitMs === undefined) return true;
                if (waitMs > (config.maxRetryAfterMs ?? 60_000)) return false;
                await sleep(waitMs, signal).catch((reason: unknown) => {
                  throw cancelledError(reason);
                });
                return true;
              },
            },
          );
        } catch (err) {
          if (signal?.aborted) throw cancelledError(signal.reason);
          if (!failure) throw err;
          const provider = target.provider;
          lastError = toModelError(failure, {
            baseUrl: provider.baseUrl,
            models: tried,
            attempts,
            timeoutMs: config.timeoutMs,
            provider: catalog.isLegacy(provider) ? undefined : provider,
          });
          const authFailed = failure.status === 401 || failure.status === 403;
          if (authFailed) {
            // 401: the key is bad for every model there. 403 may be one model the key may not use.
            if (failure.status === 401) refused.add(provider.name);
            try {
              request.onAlert?.({
                provider: provider.name,
                model: target.ref,
                status: failure.status ?? 0,
                message: lastError.message,
              });
            } catch {
              // A listener's fault must not change the turn.
            }
          }
          // Only failures another model might not have are worth a fallback (a refusal is one): not a
          // malformed request.
          const fallbackHelps =
            (failure.retry || failure.status === 404 || authFailed || failure.category === "refusal") &&
            !emitted.any;
          if (!fallbackHelps) throw lastError;
        }
      }
      throw lastError ?? new Error("no model configured");
    },
  };
}

/** The provider of the single legacy endpoint (`OPENAI_BASE_URL`, `OPENAI_API_KEY`): any model name. */
export function legacyProvider(config: Pick<ModelClientConfig, "baseUrl" | "apiKey">): ProviderSpec {
  return { name: LEGACY_PROVIDER, baseUrl: config.baseUrl, apiKey: config.apiKey, models: [] };
}
