/**
 * The OpenAI Chat Completions transport (OpenAI, OpenRouter, Ollama, llama.cpp, vLLM and every other
 * compatible server). The openai SDK sends the request and turns a failed status into its APIError;
 * the body is built here once as JSON (the tool schemas, most of it, are stringified once per schema)
 * and the answer's events are read with eventsource-parser, at less than half the CPU of the SDK's
 * own Stream.
 */
import { StringDecoder } from "node:string_decoder";
import { createParser } from "eventsource-parser";
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from "openai";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import { ModelError } from "../../core/errors.js";
import type { ToolCall } from "../../core/types.js";
import { wantsCacheMarkers } from "./catalog.js";
import { cancelledError, endedEarly, refusal, statusFailure, unknownFailure } from "./failures.js";
import { requestBody } from "./openai-chat-body.js";
import { clientPerProvider } from "./sdk-clients.js";
import type {
  AttemptFailure,
  ModelTransport,
  ResolvedModel,
  TransportAnswer,
  TransportOptions,
  TransportRequest,
} from "./types.js";

/** Builds the transport; one per process (it keeps one SDK client per provider). */
export function createOpenAIChatTransport(options: TransportOptions): ModelTransport {
  const sdkOf = clientPerProvider(options, (settings) => new OpenAI(settings));
  return {
    api: "openai-chat",
    stream: (target, request) => streamChat(sdkOf(target.provider), target, request, options.timeoutMs),
    classify: classifyOpenAIFailure,
  };
}

/** One streaming attempt against one model. */
async function streamChat(
  sdk: OpenAI,
  target: ResolvedModel,
  request: TransportRequest,
  timeoutMs: number,
): Promise<TransportAnswer> {
  const outer = request.signal;
  // The SDK's timeout covers the wait for the answer's headers; from then on an idle timer does: a
  // stream that stops sending for timeoutMs is a timeout. One timer, restarted by each read.
  let timedOut = false;
  let idle: NodeJS.Timeout | undefined;
  try {
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
    }, timeoutMs);
    idle = timer;
    const armIdle = () => void timer.refresh();
    const answer = newAnswer();
    await readChunks(response, armIdle, (chunk) => addChunk(answer, chunk, request));
    if (outer?.aborted) throw cancelledError(outer.reason);
    if (timedOut) throw new APIConnectionTimeoutError();
    const { content, finishReason, usage } = answer;
    const toolCalls: ToolCall[] = answer.calls
      .filter((c) => c?.name)
      .map((c, i) => ({
        // Some local servers send no ids; the tool result must still name its call uniquely.
        id: c.id || `call_${Date.now().toString(36)}_${i}`,
        type: "function" as const,
        function: { name: c.name, arguments: c.arguments },
      }));
    if (!content && toolCalls.length === 0) {
      if (finishReason === "content_filter") throw refusal("content_filter");
      if (!finishReason) throw endedEarly();
    }
    return {
      message: {
        role: "assistant",
        content: content || (toolCalls.length > 0 ? null : ""),
        ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
      },
      usage,
      finishReason,
    };
  } catch (err) {
    if (outer?.aborted) throw cancelledError(outer.reason);
    if (timedOut) throw new APIConnectionTimeoutError();
    throw err;
  } finally {
    clearTimeout(idle);
  }
}

/** What the chunks of one answer add up to. */
interface ChatAnswer {
  content: string;
  finishReason: string | undefined;
  usage: TransportAnswer["usage"];
  calls: { id: string; name: string; arguments: string }[];
}

function newAnswer(): ChatAnswer {
  return {
    content: "",
    finishReason: undefined,
    usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
    calls: [],
  };
}

/** Adds one streamed chunk to the answer; text goes to `onTextDelta` at once. */
function addChunk(answer: ChatAnswer, chunk: ChatCompletionChunk, request: TransportRequest): void {
  if (chunk.usage) {
    const usage = answer.usage;
    usage.promptTokens = chunk.usage.prompt_tokens;
    usage.completionTokens = chunk.usage.completion_tokens;
    usage.cachedTokens = chunk.usage.prompt_tokens_details?.cached_tokens ?? 0;
    usage.reasoningTokens = chunk.usage.completion_tokens_details?.reasoning_tokens ?? 0;
  }
  const choice = chunk.choices?.[0];
  if (!choice) return;
  const text = choice.delta?.content;
  if (text) {
    answer.content += text;
    request.onTextDelta?.(text);
  }
  for (const part of choice.delta?.tool_calls ?? []) {
    const slot = answer.calls[part.index] ?? { id: "", name: "", arguments: "" };
    answer.calls[part.index] = slot;
    if (part.id) slot.id = part.id;
    if (part.function?.name) slot.name = part.function.name;
    if (part.function?.arguments) slot.arguments += part.function.arguments;
  }
  if (choice.finish_reason) answer.finishReason = choice.finish_reason;
}

/** Classifies what the openai SDK (or the stream reader) threw. */
export function classifyOpenAIFailure(err: unknown): AttemptFailure {
  if (err instanceof APIConnectionTimeoutError) {
    return { category: "retryable", kind: "timeout", retry: true, detail: "timed out", cause: err };
  }
  if (err instanceof APIConnectionError) {
    const cause = err.cause instanceof Error ? err.cause.message : err.message;
    return { category: "retryable", kind: "connection", retry: true, detail: cause, cause: err };
  }
  if (err instanceof APIError) {
    if (err.status === undefined) {
      // An error event inside an SSE stream: the server failed mid-answer.
      return { category: "retryable", kind: "stream", retry: true, detail: err.message, cause: err };
    }
    const detail =
      err.error && typeof err.error === "object"
        ? String((err.error as { message?: unknown }).message ?? err.message)
        : err.message;
    return statusFailure(err.status, detail, err.headers, err);
  }
  if (err instanceof ModelError) {
    const category = err.retryable ? "retryable" : "invalid";
    return {
      category,
      kind: "stream",
      status: err.status,
      retry: err.retryable,
      detail: err.message,
      cause: err,
    };
  }
  return unknownFailure(err);
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
