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
 * on those calls in the next step of the turn, as the API requires. Implicit caching is Google's; its
 * cached tokens are reported.
 */
import { StringDecoder } from "node:string_decoder";
import { ApiError, type Content, type GenerateContentResponse, type Part } from "@google/genai";
import { createParser } from "eventsource-parser";
import type { ToolCall } from "../../core/types.js";
import { THINKING_BUDGETS } from "./anthropic-body.js";
import {
  cancelledError,
  endedEarly,
  refusal,
  statusFailure,
  TransportFailure,
  unknownFailure,
} from "./failures.js";
import type {
  AttemptFailure,
  ModelMessage,
  ModelTool,
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
  return {
    api: "gemini",
    stream: (target, request) => streamGemini(fetchFn, target, request, options.timeoutMs),
    classify: classifyGeminiFailure,
  };
}

/** A tool's declaration as JSON, made once per schema object. */
const declarations = new WeakMap<object, string>();

function declaration(tool: ModelTool): string {
  let d = declarations.get(tool);
  if (d === undefined) {
    const fn = tool.type === "function" ? tool.function : undefined;
    d = JSON.stringify({
      name: fn?.name ?? "",
      description: fn?.description ?? "",
      parametersJsonSchema: fn?.parameters ?? { type: "object", properties: {} },
    });
    declarations.set(tool, d);
  }
  return d;
}

/** The system instruction and contents of `messages` (another protocol's reasoning is dropped). */
export function geminiContents(
  messages: readonly ModelMessage[],
  provider: string,
): { system: Part[]; contents: Content[] } {
  const system: Part[] = [];
  const contents: Content[] = [];
  const names = new Map<string, string>();
  const add = (role: "user" | "model", parts: Part[]) => {
    if (parts.length === 0) return;
    const last = contents.at(-1);
    if (last?.role === role) last.parts!.push(...parts);
    else contents.push({ role, parts });
  };
  for (const m of messages) {
    if (m.role === "system") {
      if (contents.length === 0) system.push({ text: m.content });
      else add("user", [{ text: m.content }]);
    } else if (m.role === "user") {
      add("user", userParts(m.content));
    } else if (m.role === "tool") {
      const name = names.get(m.tool_call_id) ?? "tool";
      add("user", [{ functionResponse: { id: m.tool_call_id, name, response: { result: m.content } } }]);
    } else {
      const r = m.reasoning;
      const signatures =
        r?.api === "gemini" && r.provider === provider
          ? (r.items as { id: string; signature: string }[])
          : [];
      const parts: Part[] = m.content ? [{ text: m.content }] : [];
      for (const call of m.tool_calls ?? []) {
        names.set(call.id, call.function.name);
        const signature = signatures.find((s) => s.id === call.id)?.signature;
        parts.push({
          functionCall: { name: call.function.name, args: parseArgs(call.function.arguments) },
          ...(signature ? { thoughtSignature: signature } : {}),
        });
      }
      add("model", parts.length ? parts : [{ text: "(no answer)" }]);
    }
  }
  if (contents[0]?.role === "model")
    contents.unshift({ role: "user", parts: [{ text: "(earlier in this conversation)" }] });
  return { system, contents };
}

function userParts(content: ModelMessage["content"]): Part[] {
  if (typeof content === "string") return content ? [{ text: content }] : [];
  const parts: Part[] = [];
  for (const p of content ?? []) {
    if (typeof p === "string") continue;
    if (p.type === "text" && p.text) parts.push({ text: p.text });
    else if (p.type === "image_url") {
      const data = /^data:([^;,]+);base64,(.*)$/s.exec(p.image_url.url);
      parts.push(
        data
          ? { inlineData: { mimeType: data[1]!, data: data[2]! } }
          : { text: `[image: ${p.image_url.url}]` },
      );
    } else if (p.type === "file") {
      // A PDF sent as the file (a fallback's message within a turn): Gemini reads PDFs inline.
      const data = /^data:([^;,]+);base64,(.*)$/s.exec(p.file.file_data ?? "");
      parts.push(
        data
          ? { inlineData: { mimeType: data[1]!, data: data[2]! } }
          : { text: `[file: ${p.file.filename ?? "unnamed"}]` },
      );
    }
  }
  return parts;
}

function parseArgs(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text || "{}");
    return value && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : { value };
  } catch {
    return { _unparsed: text };
  }
}

async function streamGemini(
  fetchFn: typeof globalThis.fetch,
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
    const provider = target.provider;
    const url = `${provider.baseUrl.replace(/\/+$/, "")}/v1beta/models/${encodeURIComponent(target.model)}:streamGenerateContent?alt=sse`;
    const response = await fetchFn(url, {
      method: "POST",
      headers: {
        ...provider.headers,
        "content-type": "application/json",
        "x-goog-api-key": provider.apiKey ?? "",
      },
      body: geminiBody(target, request),
      signal: controller.signal,
    });
    if (!response.ok) {
      // The SDK's error, with Google's body as its message (what classify reads).
      throw new ApiError({ message: await response.text(), status: response.status });
    }
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

/** The JSON body of a streamGenerateContent request (the REST names the SDK would send). */
export function geminiBody(target: ResolvedModel, request: TransportRequest): string {
  const info = target.info;
  const effort = info?.reasoning ? request.reasoningEffort : undefined;
  const { system, contents } = geminiContents(request.messages, target.provider.name);
  const generation = {
    ...(effort
      ? { thinkingConfig: { thinkingBudget: info?.thinkingBudget ?? THINKING_BUDGETS[effort] } }
      : {}),
    ...(info?.maxOutputTokens ? { maxOutputTokens: info.maxOutputTokens } : {}),
  };
  let head = "{";
  if (request.tools?.length)
    head += `"tools":[{"functionDeclarations":[${request.tools.map(declaration).join(",")}]}],`;
  if (system.length) head += `"systemInstruction":${JSON.stringify({ parts: system })},`;
  if (effort || info?.maxOutputTokens) head += `"generationConfig":${JSON.stringify(generation)},`;
  return `${head}"contents":${JSON.stringify(contents)}}`;
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
