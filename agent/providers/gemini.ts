/**
 * The Google Gemini transport: `streamGenerateContent?alt=sse` of the Generative Language API (or any
 * base URL), sent on the model client's keep-alive fetch with the body built here (each tool's
 * declaration once) and the events read with eventsource-parser, as the other transports read theirs;
 * `@google/genai` gives the wire types and its `ApiError` (its own `generateContentStream` cost 2.4×
 * the chat transport's CPU per call, BENCHMARKS.md; the fake API is checked with it).
 *
 * The session's messages become contents: leading system messages the `systemInstruction`, a system
 * note later a text part of its user turn; the assistant's text and tool calls a `model` turn with
 * `functionCall` parts; tool results `functionResponse` parts (named after their call) of a user turn;
 * images (data URLs) `inlineData` parts, other image URLs a text note. Tools are declared with their
 * JSON schema as it is (`parametersJsonSchema`). Thinking: with the session's reasoning on and
 * `reasoning: true`, `thinkingConfig.thinkingBudget` (the model's `thinking_budget` or the effort's
 * budget); the thought signatures of an answer's calls ride on its message (`reasoning`) and go back
 * on those calls in the next step of the turn, as the API requires. Caching: a long system instruction
 * and tools (at least `GEMINI_CACHE_MIN_CHARS`) go into an explicit `cachedContents` entry the
 * requests name (gemini-cache.ts); shorter prefixes are left to Google's implicit caching. The cached
 * tokens are reported either way.
 */
import { StringDecoder } from "node:string_decoder";
import { ApiError, type GenerateContentResponse } from "@google/genai";
import { createParser } from "eventsource-parser";
import type { ToolCall } from "../../core/types.js";
import {
  cancelledError,
  endedEarly,
  refusal,
  statusFailure,
  TransportFailure,
  unknownFailure,
} from "./failures.js";
import { geminiBody, geminiRequest } from "./gemini-body.js";
import { cacheGone, GEMINI_CACHE_MIN_CHARS, GeminiCaches } from "./gemini-cache.js";
import type {
  AttemptFailure,
  ModelTransport,
  ResolvedModel,
  TokenUsage,
  TransportAnswer,
  TransportOptions,
  TransportRequest,
} from "./types.js";

/** Builds the transport. */
export function createGeminiTransport(options: TransportOptions): ModelTransport {
  const fetchFn = options.fetch ?? globalThis.fetch;
  const caches = new GeminiCaches(fetchFn);
  return {
    api: "gemini",
    stream: (target, request) => streamGemini(fetchFn, caches, target, request, options.timeoutMs),
    classify: classifyGeminiFailure,
  };
}

/**
 * Sends the request: naming the cached prefix when it is long enough (and the model's `cache_control`
 * is not false), once more with a new entry when the API says the entry is gone.
 * @throws the SDK's ApiError for a failed answer
 */
async function send(
  fetchFn: typeof globalThis.fetch,
  caches: GeminiCaches,
  target: ResolvedModel,
  request: TransportRequest,
  signal: AbortSignal,
): Promise<Response> {
  const provider = target.provider;
  const url = `${provider.baseUrl.replace(/\/+$/, "")}/v1beta/models/${encodeURIComponent(target.model)}:streamGenerateContent?alt=sse`;
  const headers = {
    ...provider.headers,
    "content-type": "application/json",
    "x-goog-api-key": provider.apiKey ?? "",
  };
  const { prefix, rest } = geminiRequest(target, request);
  const explicit = prefix.length >= GEMINI_CACHE_MIN_CHARS && target.info?.cacheControl !== false;
  const key = explicit ? caches.key(target, prefix) : "";
  for (let attempt = 0; ; attempt++) {
    const name = explicit ? await caches.nameFor(target, prefix, key, signal) : undefined;
    const body = geminiBody({ prefix, rest }, name);
    const response = await fetchFn(url, { method: "POST", headers, body, signal });
    if (response.ok) return response;
    const text = await response.text();
    if (name && attempt === 0 && cacheGone(response.status, text)) {
      caches.forget(key);
      continue;
    }
    // The SDK's error, with Google's body as its message (what classify reads).
    throw new ApiError({ message: text, status: response.status });
  }
}

async function streamGemini(
  fetchFn: typeof globalThis.fetch,
  caches: GeminiCaches,
  target: ResolvedModel,
  request: TransportRequest,
  timeoutMs: number,
): Promise<TransportAnswer> {
  const outer = request.signal;
  if (outer?.aborted) throw cancelledError(outer.reason);
  // One signal for the request: the turn's, or the timer's (headers, then each silence of the stream).
  const controller = new AbortController();
  const onAbort = () => controller.abort(outer?.reason);
  outer?.addEventListener("abort", onAbort, { once: true });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  try {
    const response = await send(fetchFn, caches, target, request, controller.signal);
    const answer: GeminiAnswer = {
      text: "",
      calls: [],
      signatures: [],
      finish: undefined,
      usage: {
        promptTokens: 0,
        completionTokens: 0,
        cachedTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
      },
    };
    await readChunks(
      response,
      () => void timer.refresh(),
      (chunk) => addChunk(answer, chunk, request),
    );
    if (outer?.aborted) throw cancelledError(outer.reason);
    return finishAnswer(answer, target);
  } catch (err) {
    if (outer?.aborted) throw cancelledError(outer.reason);
    if (timedOut) {
      throw new TransportFailure({
        category: "retryable",
        kind: "timeout",
        retry: true,
        detail: "timed out",
      });
    }
    throw err;
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener("abort", onAbort);
  }
}

/**
 * Reads the answer's server-sent events (each \`data:\` one GenerateContentResponse) until the body
 * ends, as the other transports read theirs. On a throw the connection is closed.
 */
async function readChunks(
  response: Response,
  onBytes: () => void,
  onChunk: (chunk: GenerateContentResponse) => void,
): Promise<void> {
  if (!response.body) throw endedEarly();
  let failure: unknown;
  const parser = createParser({
    onEvent(event) {
      if (failure !== undefined) return;
      try {
        onChunk(JSON.parse(event.data) as GenerateContentResponse);
      } catch (err) {
        failure = err;
      }
    },
  });
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

/** What the chunks of one answer add up to. */
interface GeminiAnswer {
  text: string;
  calls: ToolCall[];
  signatures: { id: string; signature: string }[];
  finish: string | undefined;
  usage: TokenUsage;
}

/** Adds one streamed chunk: text to `onTextDelta` at once, calls with their signatures, the usage so far. */
function addChunk(answer: GeminiAnswer, chunk: GenerateContentResponse, request: TransportRequest): void {
  const candidate = chunk.candidates?.[0];
  for (const part of candidate?.content?.parts ?? []) {
    if (part.thought) continue;
    if (part.text) {
      answer.text += part.text;
      request.onTextDelta?.(part.text);
    }
    if (part.functionCall) {
      const id = part.functionCall.id ?? `call_${Date.now().toString(36)}_${answer.calls.length}`;
      const args = JSON.stringify(part.functionCall.args ?? {});
      answer.calls.push({
        id,
        type: "function",
        function: { name: part.functionCall.name ?? "", arguments: args },
      });
      if (part.thoughtSignature) answer.signatures.push({ id, signature: part.thoughtSignature });
    }
  }
  if (candidate?.finishReason) answer.finish = candidate.finishReason;
  if (chunk.promptFeedback?.blockReason) answer.finish = chunk.promptFeedback.blockReason;
  const u = chunk.usageMetadata;
  if (!u) return;
  const usage = answer.usage;
  usage.promptTokens = u.promptTokenCount ?? usage.promptTokens;
  usage.cachedTokens = u.cachedContentTokenCount ?? usage.cachedTokens;
  usage.reasoningTokens = u.thoughtsTokenCount ?? usage.reasoningTokens;
  // Thought tokens are billed as output: the completion counts them, as the other protocols do.
  usage.completionTokens = (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0);
}

function finishAnswer(answer: GeminiAnswer, target: ResolvedModel): TransportAnswer {
  const { text, calls, signatures, finish } = answer;
  if (!text && calls.length === 0) {
    if (finish && finish !== "STOP" && finish !== "MAX_TOKENS") throw refusal(finish);
    if (!finish) throw endedEarly();
  }
  const reasoning = { api: "gemini", provider: target.provider.name, items: signatures };
  return {
    message: {
      role: "assistant",
      content: text || (calls.length > 0 ? null : ""),
      ...(calls.length > 0 ? { tool_calls: calls } : {}),
      ...(signatures.length > 0 ? { reasoning } : {}),
    },
    usage: answer.usage,
    finishReason:
      calls.length > 0
        ? "tool_calls"
        : finish === "MAX_TOKENS"
          ? "length"
          : finish === "STOP"
            ? "stop"
            : finish?.toLowerCase(),
  };
}

/** Google's error body: `{ error: { code, message, status, details: [RetryInfo, ErrorInfo …] } }`. */
interface GoogleError {
  error?: {
    message?: string;
    status?: string;
    details?: { "@type"?: string; retryDelay?: string; reason?: string }[];
  };
}

/** Classifies what the SDK threw: its ApiError carries the status and Google's error body as its message. */
export function classifyGeminiFailure(err: unknown): AttemptFailure {
  if (!(err instanceof ApiError)) return unknownFailure(err);
  let body: GoogleError = {};
  try {
    body = JSON.parse(err.message) as GoogleError;
  } catch {
    // Not JSON: the message is the detail.
  }
  const detail = body.error?.message ?? err.message;
  const details = body.error?.details ?? [];
  // Google answers a bad key with 400 INVALID_ARGUMENT: it is the key all the same.
  const badKey = details.some((d) => d.reason === "API_KEY_INVALID");
  const failure = statusFailure(badKey ? 401 : err.status, detail, undefined, err);
  const delay = details.find((d) => d["@type"]?.endsWith("RetryInfo"))?.retryDelay;
  if (delay && /^\d+(\.\d+)?s$/.test(delay))
    failure.retryAfterMs = Math.round(Number.parseFloat(delay) * 1000);
  return failure;
}
