/**
 * Contracts of model providers: where each model is served (base URL, key, extra headers), what it
 * costs and can do, and how a model reference (`provider/model`) names one. The catalog
 * (`agent/providers/catalog.ts`) resolves references; the model client (agent/) sends the requests.
 */
import type { ChatCompletionContentPart, ChatCompletionTool } from "openai/resources/chat/completions";
import type { AssistantMessage, ChatMessage } from "../../core/types.js";

/** US dollars per million tokens. `cached` prices prompt tokens the provider served from its cache. */
export interface ModelPrice {
  input: number;
  output: number;
  /** @defaultValue the `input` price */
  cached?: number | undefined;
  /** Prompt tokens written to the cache (Anthropic, Bedrock). @defaultValue the `input` price */
  cacheWrite?: number | undefined;
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
  /**
   * Extended thinking's budget in tokens (Anthropic, Gemini, Bedrock's Claude), used when the session's
   * reasoning is on. @defaultValue by effort: low 2,048, medium 8,192, high 24,576
   */
  thinkingBudget?: number | undefined;
  /** The longest answer in tokens (Anthropic requires one), thinking excluded. @defaultValue 8,192 */
  maxOutputTokens?: number | undefined;
}

/** One OpenAI-compatible endpoint. The key is resolved from the environment by the config loader. */
export interface ProviderSpec {
  name: string;
  /** The wire protocol. @defaultValue read from `baseUrl` (see `apiOf`), else `openai-chat` */
  api?: ModelApi | undefined;
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

/** The wire protocol a provider speaks; each has one `ModelTransport`. */
export type ModelApi = "openai-chat" | "openai-responses" | "anthropic" | "gemini" | "bedrock";

/** Every wire protocol, in the order `api:` documents them. */
export const MODEL_APIS = ["openai-chat", "openai-responses", "anthropic", "gemini", "bedrock"] as const;

/**
 * A message as sent to the model: a stored `ChatMessage` (the OpenAI chat shape is the session's own
 * format, whatever protocol answered), or a user message with image parts. Each transport converts it.
 */
export type ModelMessage = ChatMessage | { role: "user"; content: ChatCompletionContentPart[] };

/** A function tool as the agent declares it (the OpenAI chat shape; each transport converts it). */
export type ModelTool = ChatCompletionTool;

/** Tokens of one model call. `promptTokens` counts all input, cached and cache-written included. */
export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  /** Input tokens read from the provider's prompt cache. */
  cachedTokens: number;
  /** Input tokens written to the prompt cache (Anthropic and Bedrock price them above input). */
  cacheWriteTokens: number;
  /** Output tokens spent reasoning (part of `completionTokens`); 0 where the API does not say. */
  reasoningTokens: number;
}

/** One request to one model, protocol-neutral; the transport builds its vendor's body from it. */
export interface TransportRequest {
  messages: readonly ModelMessage[];
  tools?: readonly ModelTool[] | undefined;
  /** Asked of reasoning models (declared `reasoning: true`); undefined: the provider's default. */
  reasoningEffort?: ReasoningEffort | undefined;
  /**
   * How many leading messages equal the session's previous request (system prompt and stored history):
   * where a transport with explicit caching puts its prefix breakpoint.
   */
  stableCount?: number | undefined;
  signal?: AbortSignal | undefined;
  /** Each piece of answer text as it streams. Must not throw. */
  onTextDelta?: ((text: string) => void) | undefined;
}

/** What one model call answered. */
export interface TransportAnswer {
  message: AssistantMessage;
  usage: TokenUsage;
  finishReason: string | undefined;
}

/** How a failed call is to be treated: the model client retries, compresses, falls back or gives up. */
export type FailureCategory = "retryable" | "context-too-long" | "auth" | "refusal" | "invalid";

/** How one attempt failed, as its transport read it. */
export interface AttemptFailure {
  category: FailureCategory;
  kind: "status" | "connection" | "timeout" | "stream";
  status?: number | undefined;
  /** The same request may succeed later (429, 5xx, overloaded, network, timeout). */
  retry: boolean;
  retryAfterMs?: number | undefined;
  detail: string;
  cause: unknown;
  /** The request is longer than the model's context: compressing may help. */
  contextTooLong?: boolean | undefined;
}

/**
 * One wire protocol to models. Stateless per request; keeps one SDK client (and its connection pool)
 * per provider. Retries, fallbacks and the user's error messages are the model client's (agent/).
 */
export interface ModelTransport {
  readonly api: ModelApi;
  /**
   * One streaming call, no retry. Text goes to `onTextDelta` as it arrives; the answer is the whole
   * assistant message (tool calls, the reasoning to send back) with its usage.
   * @throws what the vendor's SDK throws (read by `classify`), `TransportFailure` for failures the
   * transport itself recognises (a refusal, a stream that ended without an answer), or the cancelled
   * error when `request.signal` fires.
   */
  stream(target: ResolvedModel, request: TransportRequest): Promise<TransportAnswer>;
  /** Reads a thrown value of `stream` (never an abort: the caller checks its signal first). */
  classify(err: unknown): AttemptFailure;
}

/** What a transport is built with. */
export interface TransportOptions {
  /** Wait for the answer's headers, and the longest silence within a stream. */
  timeoutMs: number;
  /** The fetch the SDKs use (the process's keep-alive pool). @defaultValue globalThis.fetch */
  fetch?: typeof globalThis.fetch | undefined;
}
