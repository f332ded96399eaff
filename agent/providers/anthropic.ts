/**
 * The Anthropic Messages transport on `@anthropic-ai/sdk` (loaded with this module, on first use). The
 * SDK sends the request (its auth headers, `anthropic-version`, its errors); the body is built by
 * `anthropic-body.ts` and the answer's server-sent events (`message_start`, `content_block_start`,
 * `content_block_delta` with text, thinking, signature and tool-input deltas, `message_delta`,
 * `error`) are read here with eventsource-parser, as the chat transport reads its chunks.
 *
 * Thinking: asked when the model declares `reasoning: true` and the session's reasoning is on, with
 * the model's `thinking_budget` or the effort's budget. The signed thinking blocks of an answer come
 * back on its message (`reasoning`) and are sent again before its tool calls in the next step.
 */
import { StringDecoder } from "node:string_decoder";
import Anthropic, { APIConnectionError, APIConnectionTimeoutError, APIError } from "@anthropic-ai/sdk";
import { createParser } from "eventsource-parser";
import type { ToolCall } from "../../core/types.js";
import { type AnthropicBlock, anthropicBody, THINKING_BUDGETS } from "./anthropic-body.js";
import { cancelledError, endedEarly, refusal, statusFailure, unknownFailure } from "./failures.js";
import { clientPerProvider } from "./sdk-clients.js";
import type {
  AttemptFailure,
  ModelTransport,
  ResolvedModel,
  TokenUsage,
  TransportAnswer,
  TransportOptions,
  TransportRequest,
} from "./types.js";

/** The answer length asked when the model declares none (the API requires one). */
const DEFAULT_MAX_OUTPUT_TOKENS = 8192;

/** Builds the transport (one SDK client per provider). */
export function createAnthropicTransport(options: TransportOptions): ModelTransport {
  const sdkOf = clientPerProvider(options, (settings) => new Anthropic(settings));
  return {
    api: "anthropic",
    stream: (target, request) => streamMessages(sdkOf(target.provider), target, request, options.timeoutMs),
    classify: classifyAnthropicFailure,
  };
}

/** What the events of one answer add up to. */
interface Answer {
  blocks: (AnthropicBlock & { json?: string })[];
  usage: TokenUsage;
  stopReason: string | undefined;
  text: string;
}

async function streamMessages(
  sdk: Anthropic,
  target: ResolvedModel,
  request: TransportRequest,
  timeoutMs: number,
): Promise<TransportAnswer> {
  const outer = request.signal;
  const info = target.info;
  const effort = info?.reasoning ? request.reasoningEffort : undefined;
  const body = anthropicBody(request.messages, request.tools, request.stableCount, {
    model: target.model,
    provider: target.provider.name,
    maxOutputTokens: info?.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS,
    thinkingBudget: effort ? (info?.thinkingBudget ?? THINKING_BUDGETS[effort]) : undefined,
    cache: info?.cacheControl ?? true,
  });
  let timedOut = false;
  let idle: NodeJS.Timeout | undefined;
  try {
    const response = await sdk
      .post("/v1/messages", {
        body,
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
    const answer: Answer = {
      blocks: [],
      usage: {
        promptTokens: 0,
        completionTokens: 0,
        cachedTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
      },
      stopReason: undefined,
      text: "",
    };
    await readEvents(
      response,
      () => void timer.refresh(),
      (event) => onEvent(event, answer, request),
    );
    if (outer?.aborted) throw cancelledError(outer.reason);
    if (timedOut) throw new APIConnectionTimeoutError();
    return finish(answer, target);
  } catch (err) {
    if (outer?.aborted) throw cancelledError(outer.reason);
    if (timedOut) throw new APIConnectionTimeoutError();
    throw err;
  } finally {
    clearTimeout(idle);
  }
}

/** The vendor's usage fields as they come in `message_start` and `message_delta`. */
interface WireUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  output_tokens_details?: { thinking_tokens?: number } | null;
}

/** A streamed event, loosely typed: only the fields read here. */
interface WireEvent {
  type: string;
  index?: number;
  message?: { usage?: WireUsage };
  content_block?: AnthropicBlock;
  delta?: {
    type?: string;
    text?: string;
    thinking?: string;
    signature?: string;
    partial_json?: string;
    stop_reason?: string | null;
  };
  usage?: WireUsage;
  error?: { type?: string; message?: string };
}

function addUsage(into: TokenUsage, u: WireUsage | undefined): void {
  if (!u) return;
  const read = u.cache_read_input_tokens ?? undefined;
  const write = u.cache_creation_input_tokens ?? undefined;
  if (read !== undefined) into.cachedTokens = read;
  if (write !== undefined) into.cacheWriteTokens = write;
  if (u.input_tokens != null) into.promptTokens = u.input_tokens + into.cachedTokens + into.cacheWriteTokens;
  if (u.output_tokens != null) into.completionTokens = u.output_tokens;
  const thinking = u.output_tokens_details?.thinking_tokens;
  if (thinking !== undefined) into.reasoningTokens = thinking;
}

function onEvent(event: WireEvent, answer: Answer, request: TransportRequest): void {
  switch (event.type) {
    case "message_start":
      addUsage(answer.usage, event.message?.usage);
      return;
    case "content_block_start":
      if (event.content_block && event.index !== undefined)
        answer.blocks[event.index] = { ...event.content_block };
      return;
    case "content_block_delta": {
      const block = event.index === undefined ? undefined : answer.blocks[event.index];
      const d = event.delta;
      if (!block || !d) return;
      if (d.type === "text_delta" && d.text) {
        block.text = `${(block.text as string | undefined) ?? ""}${d.text}`;
        answer.text += d.text;
        request.onTextDelta?.(d.text);
      } else if (d.type === "thinking_delta") {
        block.thinking = `${(block.thinking as string | undefined) ?? ""}${d.thinking ?? ""}`;
      } else if (d.type === "signature_delta") {
        block.signature = d.signature ?? "";
      } else if (d.type === "input_json_delta") {
        block.json = (block.json ?? "") + (d.partial_json ?? "");
      }
      return;
    }
    case "message_delta":
      if (event.delta?.stop_reason) answer.stopReason = event.delta.stop_reason;
      addUsage(answer.usage, event.usage);
      return;
    case "error":
      throw new APIError(undefined, event.error ?? {}, event.error?.message ?? "stream error", undefined);
  }
}

const FINISH: Record<string, string> = { end_turn: "stop", tool_use: "tool_calls", max_tokens: "length" };

function finish(answer: Answer, target: ResolvedModel): TransportAnswer {
  const calls: ToolCall[] = [];
  const reasoning: AnthropicBlock[] = [];
  for (const block of answer.blocks) {
    if (!block) continue;
    if (block.type === "tool_use") {
      const input =
        block.json ?? (block.input && Object.keys(block.input).length ? JSON.stringify(block.input) : "{}");
      calls.push({
        id: String(block.id),
        type: "function",
        function: { name: String(block.name), arguments: input },
      });
    } else if (block.type === "thinking" || block.type === "redacted_thinking") {
      reasoning.push(block);
    }
  }
  const stop = answer.stopReason;
  if (!answer.text && calls.length === 0) {
    if (stop === "refusal") throw refusal("refusal");
    if (!stop) throw endedEarly();
  }
  return {
    message: {
      role: "assistant",
      content: answer.text || (calls.length > 0 ? null : ""),
      ...(calls.length > 0 ? { tool_calls: calls } : {}),
      ...(reasoning.length > 0
        ? { reasoning: { api: "anthropic", provider: target.provider.name, items: reasoning } }
        : {}),
    },
    usage: answer.usage,
    finishReason: stop ? (FINISH[stop] ?? stop) : undefined,
  };
}

/** Classifies what the Anthropic SDK (or the event reader) threw. */
export function classifyAnthropicFailure(err: unknown): AttemptFailure {
  if (err instanceof APIConnectionTimeoutError) {
    return { category: "retryable", kind: "timeout", retry: true, detail: "timed out", cause: err };
  }
  if (err instanceof APIConnectionError) {
    const cause = err.cause instanceof Error ? err.cause.message : err.message;
    return { category: "retryable", kind: "connection", retry: true, detail: cause, cause: err };
  }
  if (err instanceof APIError) {
    // Anthropic's body: { type: "error", error: { type, message } }; the SDK keeps it in `error`.
    const body = err.error as {
      error?: { message?: string; type?: string };
      message?: string;
      type?: string;
    };
    const inner = body?.error ?? body;
    const detail = String(inner?.message ?? err.message);
    if (err.status === undefined) {
      // An `error` event mid-stream (overloaded_error, api_error): the server failed while answering.
      return { category: "retryable", kind: "stream", retry: true, detail, cause: err };
    }
    return statusFailure(err.status, detail, err.headers, err);
  }
  return unknownFailure(err);
}

/**
 * Reads the answer's server-sent events until the body ends; each `data:` is one JSON event (its
 * `type` repeats the event name). `onBytes` runs per network read (the idle timer). On a throw the
 * connection is closed, so a half-read answer never holds a pooled socket.
 */
async function readEvents(response: Response, onBytes: () => void, onData: (event: WireEvent) => void) {
  if (!response.body) throw new APIConnectionError({ message: "the answer had no body" });
  let failure: unknown;
  const parser = createParser({
    onEvent(event) {
      if (failure !== undefined || event.event === "ping") return;
      try {
        onData(JSON.parse(event.data) as WireEvent);
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
