/**
 * A thin wrapper on the openai SDK: one streaming chat call that assembles the assistant message,
 * with retries (p-retry: exponential backoff with jitter, Retry-After honoured) and a fallback chain
 * that may cross providers (one SDK instance per provider, each with its key and headers).
 */
import { StringDecoder } from "node:string_decoder";
import { createParser } from "eventsource-parser";
import type OpenAI from "openai";
import type {
  ChatCompletionChunk,
  ChatCompletionContentPart,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import pRetry, { AbortError as RetryAbort } from "p-retry";
import { ModelError } from "../core/errors.js";
import { sleep } from "../core/sleep.js";
import type { ProviderAlert } from "../core/turn.js";
import type { ChatMessage, ToolCall } from "../core/types.js";
import { modelConfigProblem } from "./model-config.js";
import { type AttemptFailure, cancelledError, classifyFailure, toModelError } from "./model-errors.js";
import { createNodeFetch } from "./node-fetch.js";
import { loadOpenAI } from "./openai-sdk.js";
import { LEGACY_PROVIDER, ProviderCatalog, wantsCacheMarkers } from "./providers/catalog.js";
import type { ProviderSpec, ReasoningEffort, ResolvedModel } from "./providers/types.js";

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

/** A message as sent to the model: a stored `ChatMessage`, or a user message with image parts. */
export type ModelMessage = ChatMessage | { role: "user"; content: ChatCompletionContentPart[] };

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
  tools?: ChatCompletionTool[] | undefined;
  signal?: AbortSignal | undefined;
  /** Called with each piece of assistant text as it streams. Must not throw. */
  onTextDelta?: ((text: string) => void) | undefined;
}

export interface StreamChatResult {
  message: { role: "assistant"; content: string | null; tool_calls?: ToolCall[] | undefined };
  usage: { promptTokens: number; completionTokens: number; cachedTokens: number };
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
  const fetch = createNodeFetch();
  const sdks = new Map<string, OpenAI>();
  const sdkOf = async (provider: ProviderSpec) => {
    let sdk = sdks.get(provider.name);
    if (!sdk) {
      const { default: OpenAI } = await loadOpenAI();
      sdk = new OpenAI({
        baseURL: provider.baseUrl,
        // Local servers (Ollama, llama.cpp) take any key; the SDK insists on one.
        apiKey: provider.apiKey ?? "not-set",
        maxRetries: 0,
        timeout: config.timeoutMs,
        fetch,
        defaultHeaders: provider.headers ? { ...provider.headers } : undefined,
      });
      sdks.set(provider.name, sdk);
    }
    return sdk;
  };

  /** One streaming attempt against one model. */
  async function attempt(target: ResolvedModel, request: StreamChatRequest, emitted: { any: boolean }) {
    const sdk = await sdkOf(target.provider);
    const { APIConnectionError, APIConnectionTimeoutError } = await loadOpenAI();
    const outer = request.signal;
    // The SDK's timeout covers the wait for the answer's headers; from then on an idle timer does: a
    // stream that stops sending for timeoutMs is a timeout. One timer, restarted by each read.
    let timedOut = false;
    let idle: NodeJS.Timeout | undefined;
    try {
      // The SDK's chat.completions.create posts the same request; a body already in JSON skips the
      // SDK's stringify of the tool schemas on every call (they are most of the body and never change).
      // The SDK sends it and turns a failed status into its APIError; the answer's events are read
      // here (see readChunks), which costs less than half the CPU of the SDK's Stream.
      const response = await sdk
        .post("/chat/completions", {
          body: requestBody(target.model, request, {
            reasoningEffort: target.info?.reasoning ? request.reasoningEffort : undefined,
            cacheMarkers: wantsCacheMarkers(target),
          }),
          headers: { "content-type": "application/json" },
          stream: true,
          signal: outer ?? null,
        })
        .asResponse();
      const timer = setTimeout(() => {
        timedOut = true;
        void response.body?.cancel();
      }, config.timeoutMs);
      idle = timer;
      const armIdle = () => void timer.refresh();
      let content = "";
      let finishReason: string | undefined;
      const usage = { promptTokens: 0, completionTokens: 0, cachedTokens: 0 };
      const calls: { id: string; name: string; arguments: string }[] = [];
      await readChunks(response, armIdle, (chunk) => {
        if (chunk.usage) {
          usage.promptTokens = chunk.usage.prompt_tokens;
          usage.completionTokens = chunk.usage.completion_tokens;
          usage.cachedTokens = chunk.usage.prompt_tokens_details?.cached_tokens ?? 0;
        }
        const choice = chunk.choices?.[0];
        if (!choice) return;
        const text = choice.delta?.content;
        if (text) {
          content += text;
          emitted.any = true;
          request.onTextDelta?.(text);
        }
        for (const part of choice.delta?.tool_calls ?? []) {
          const slot = calls[part.index] ?? { id: "", name: "", arguments: "" };
          calls[part.index] = slot;
          if (part.id) slot.id = part.id;
          if (part.function?.name) slot.name = part.function.name;
          if (part.function?.arguments) slot.arguments += part.function.arguments;
        }
        if (choice.finish_reason) finishReason = choice.finish_reason;
      });
      if (outer?.aborted) throw cancelledError(outer.reason);
      if (timedOut) throw new APIConnectionTimeoutError();
      const toolCalls: ToolCall[] = calls
        .filter((c) => c?.name)
        .map((c, i) => ({
          // Some local servers send no ids; the tool result must still name its call uniquely.
          id: c.id || `call_${Date.now().toString(36)}_${i}`,
          type: "function" as const,
          function: { name: c.name, arguments: c.arguments },
        }));
      if (!finishReason && !content && toolCalls.length === 0) {
        throw new APIConnectionError({ message: "the stream ended without an answer" });
      }
      const result: StreamChatResult = {
        message: {
          role: "assistant",
          content: content || (toolCalls.length > 0 ? null : ""),
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        usage,
        model: target.ref,
        finishReason,
      };
      return result;
    } catch (err) {
      if (outer?.aborted) throw cancelledError(outer.reason);
      if (timedOut) throw new APIConnectionTimeoutError();
      throw err;
    } finally {
      clearTimeout(idle);
    }
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
        try {
          return await pRetry(
            async () => {
              attempts++;
              try {
                return await attempt(target, request, emitted);
              } catch (err) {
                if (signal?.aborted) throw new RetryAbort(cancelledError(signal.reason));
                failure = classifyFailure(err);
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
          // Only failures another model might not have are worth a fallback: not a malformed request.
          const fallbackHelps = (failure.retry || failure.status === 404 || authFailed) && !emitted.any;
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

/**
 * Reads a streamed chat completion: server-sent events (eventsource-parser), each `data:` a JSON chunk,
 * until the body ends. `[DONE]` is skipped; a chunk carrying `error` (a failure mid-answer) throws the
 * SDK's APIError, as the SDK's own Stream does. `onBytes` runs per network read (the idle timer).
 * On a throw the connection is closed, so a half-read answer never holds a pooled socket.
 */
async function readChunks(
  response: Response,
  onBytes: () => void,
  onChunk: (chunk: ChatCompletionChunk) => void,
): Promise<void> {
  const { APIConnectionError, APIError } = await loadOpenAI();
  if (!response.body) throw new APIConnectionError({ message: "the answer had no body" });
  let failure: unknown;
  const parser = createParser({
    onEvent(event) {
      if (failure !== undefined || event.data.startsWith("[DONE]")) return;
      try {
        const chunk = JSON.parse(event.data) as ChatCompletionChunk & { error?: unknown };
        if (chunk?.error) throw new APIError(undefined, chunk.error as object, undefined, response.headers);
        onChunk(chunk);
      } catch (err) {
        failure = err;
      }
    },
  });
  // Bytes as they arrive split anywhere, even inside a character: the decoder keeps the partial one.
  const text = new StringDecoder("utf8");
  try {
    for await (const bytes of response.body as unknown as AsyncIterable<Uint8Array>) {
      onBytes();
      parser.feed(text.write(bytes as Buffer));
      if (failure !== undefined) throw failure;
    }
    parser.feed(text.end());
    if (failure !== undefined) throw failure;
  } catch (err) {
    await response.body.cancel().catch(() => {});
    throw err;
  }
}

/** Each tool schema's JSON, made once (a schema object is never changed after it is built). */
const toolJson = new WeakMap<object, string>();

/** What a request adds for its model: reasoning effort, prompt-cache markers. */
export interface RequestExtras {
  reasoningEffort?: ReasoningEffort | undefined;
  cacheMarkers?: boolean | undefined;
}

/** The JSON body of a streaming chat.completions request, as the SDK would send it. */
export function requestBody(
  model: string,
  request: Pick<StreamChatRequest, "messages" | "tools" | "stableCount">,
  extras: RequestExtras = {},
): string {
  let tools = "";
  if (request.tools?.length) {
    const parts: string[] = [];
    for (const tool of request.tools) {
      let json = toolJson.get(tool);
      if (json === undefined) {
        json = JSON.stringify(tool);
        toolJson.set(tool, json);
      }
      parts.push(json);
    }
    tools = `,"tools":[${parts.join(",")}]`;
  }
  const messages = extras.cacheMarkers
    ? withCacheMarkers(request.messages, request.stableCount)
    : request.messages;
  const reasoning = extras.reasoningEffort
    ? `,"reasoning_effort":${JSON.stringify(extras.reasoningEffort)}`
    : "";
  // Everything else before messages: the body's bytes then grow only at the end from one turn to the
  // next (the tool schemas, the largest part, are the same every turn), as a prompt cache sees the
  // prompt, and the fixed fields are part of the repeated prefix instead of following the new messages.
  return `{"model":${JSON.stringify(model)},"stream":true,"stream_options":{"include_usage":true}${reasoning}${tools},"messages":${JSON.stringify(messages)}}`;
}

const EPHEMERAL = { type: "ephemeral" } as const;

/**
 * Anthropic's explicit prompt caching as OpenRouter takes it: a `cache_control` marker on the system
 * prompt and on the last message of the stable prefix (the stored history), so the next turn reads
 * everything up to there from the cache. Content moves into a text part to carry the marker.
 */
export function withCacheMarkers(messages: readonly ModelMessage[], stableCount?: number): ModelMessage[] {
  const out = [...messages];
  const mark = (i: number) => {
    const m = out[i];
    if (!m || typeof m.content !== "string" || !m.content) return false;
    out[i] = {
      ...m,
      content: [{ type: "text", text: m.content, cache_control: EPHEMERAL }],
    } as unknown as ModelMessage;
    return true;
  };
  if (out[0]?.role === "system") mark(0);
  const last = Math.min(stableCount ?? 0, out.length) - 1;
  for (let i = last; i > 0; i--) {
    const role = out[i]?.role;
    if ((role === "user" || role === "assistant") && mark(i)) break;
  }
  return out;
}
