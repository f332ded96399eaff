/**
 * A thin wrapper on the openai SDK: one streaming chat call that assembles the assistant message,
 * with retries (p-retry: exponential backoff with jitter, Retry-After honoured) and fallback models.
 */
import { StringDecoder } from "node:string_decoder";
import { createParser } from "eventsource-parser";
import OpenAI, { APIConnectionError, APIError } from "openai";
import type {
  ChatCompletionChunk,
  ChatCompletionContentPart,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import pRetry, { AbortError as RetryAbort } from "p-retry";
import { ModelError } from "../core/errors.js";
import type { ChatMessage, ToolCall } from "../core/types.js";
import { modelConfigProblem } from "./model-config.js";
import { type AttemptFailure, cancelledError, classifyFailure, toModelError } from "./model-errors.js";
import { createNodeFetch } from "./node-fetch.js";

/** What the client needs of the `model` config section, plus retry timing (tests shorten it). */
export interface ModelClientConfig {
  baseUrl: string;
  name: string;
  /** Models tried in order when the main one fails after its retries (same endpoint). */
  fallbacks: string[];
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
  /** @defaultValue the configured model (`config.name`) */
  model?: string | undefined;
  messages: ModelMessage[];
  tools?: ChatCompletionTool[] | undefined;
  signal?: AbortSignal | undefined;
  /** Called with each piece of assistant text as it streams. Must not throw. */
  onTextDelta?: ((text: string) => void) | undefined;
}

export interface StreamChatResult {
  message: { role: "assistant"; content: string | null; tool_calls?: ToolCall[] | undefined };
  usage: { promptTokens: number; completionTokens: number };
  /** The model that answered (a fallback when the main one failed). */
  model: string;
  finishReason: string | undefined;
}

/** Streams chat completions from the configured endpoint. */
export interface ModelClient {
  readonly config: ModelClientConfig;
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
  const sdk = new OpenAI({
    baseURL: config.baseUrl,
    // Local servers (Ollama, llama.cpp) take any key; the SDK insists on one.
    apiKey: config.apiKey ?? "not-set",
    maxRetries: 0,
    timeout: config.timeoutMs,
    fetch: createNodeFetch(),
  });
  // Nothing to retry when nothing is configured: every turn says so at once (a fresh install).
  const missing = modelConfigProblem(config);

  /** One streaming attempt against one model. */
  async function attempt(model: string, request: StreamChatRequest, emitted: { any: boolean }) {
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
          body: requestBody(model, request),
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
      const usage = { promptTokens: 0, completionTokens: 0 };
      const calls: { id: string; name: string; arguments: string }[] = [];
      await readChunks(response, armIdle, (chunk) => {
        if (chunk.usage) {
          usage.promptTokens = chunk.usage.prompt_tokens;
          usage.completionTokens = chunk.usage.completion_tokens;
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
      if (timedOut) throw new OpenAI.APIConnectionTimeoutError();
      const toolCalls: ToolCall[] = calls
        .filter((c) => c?.name)
        .map((c, i) => ({
          // Some local servers send no ids; the tool result must still name its call uniquely.
          id: c.id || `call_${Date.now().toString(36)}_${i}`,
          type: "function" as const,
          function: { name: c.name, arguments: c.arguments },
        }));
      if (!finishReason && !content && toolCalls.length === 0) {
        throw new OpenAI.APIConnectionError({ message: "the stream ended without an answer" });
      }
      const result: StreamChatResult = {
        message: {
          role: "assistant",
          content: content || (toolCalls.length > 0 ? null : ""),
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        usage,
        model,
        finishReason,
      };
      return result;
    } catch (err) {
      if (outer?.aborted) throw cancelledError(outer.reason);
      if (timedOut) throw new OpenAI.APIConnectionTimeoutError();
      throw err;
    } finally {
      clearTimeout(idle);
    }
  }

  return {
    config,
    async streamChat(request) {
      if (missing) throw new ModelError(missing, { code: "config_missing", retryable: false });
      const signal = request.signal;
      const models = [request.model ?? config.name, ...config.fallbacks.filter((m) => m !== request.model)];
      const unique = [...new Set(models)];
      const tried: string[] = [];
      let attempts = 0;
      let lastError: ModelError | undefined;
      const emitted = { any: false };

      for (const model of unique) {
        tried.push(model);
        let failure: AttemptFailure | undefined;
        try {
          return await pRetry(
            async () => {
              attempts++;
              try {
                return await attempt(model, request, emitted);
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
                await sleep(waitMs, signal);
                return true;
              },
            },
          );
        } catch (err) {
          if (signal?.aborted) throw cancelledError(signal.reason);
          if (!failure) throw err;
          lastError = toModelError(failure, {
            baseUrl: config.baseUrl,
            models: tried,
            attempts,
            timeoutMs: config.timeoutMs,
          });
          // Only failures another model might not have are worth a fallback: not a bad key or request.
          const fallbackHelps = (failure.retry || failure.status === 404) && !emitted.any;
          if (!fallbackHelps) throw lastError;
        }
      }
      throw lastError ?? new Error("no model configured");
    },
  };
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

/** The JSON body of a streaming chat.completions request, as the SDK would send it. */
export function requestBody(model: string, request: Pick<StreamChatRequest, "messages" | "tools">): string {
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
  return `{"model":${JSON.stringify(model)},"messages":${JSON.stringify(request.messages)}${tools},"stream":true,"stream_options":{"include_usage":true}}`;
}

/** Resolves after `ms`; rejects with the cancelled error when `signal` fires first. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(cancelledError(signal.reason));
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(cancelledError(signal?.reason));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
