/**
 * The objects of the Responses API as Herald answers them: the response (`object: "response"`), its
 * output items (one assistant `message` with an `output_text` part, then a `function_call` per call
 * the client runs) and its `usage`.
 */
import type { ToolCall } from "../../core/types.js";
import type { TokenUsage } from "./respond.js";

/** What a response echoes of its request. */
export interface ResponseRequestEcho {
  model: string;
  instructions: string | null;
  previousResponseId: string | null;
  store: boolean;
  tools: unknown[];
  metadata: Record<string, string>;
  user: string | undefined;
  /** Created with `background: true` (answered at once, polled). */
  background?: boolean | undefined;
}

/** An assistant message item with its text. */
export function messageItem(id: string, text: string, status: "in_progress" | "completed" = "completed") {
  return {
    type: "message" as const,
    id,
    status,
    role: "assistant" as const,
    content: status === "completed" ? [textPart(text)] : [],
  };
}

/** An `output_text` content part. */
export function textPart(text: string) {
  return { type: "output_text" as const, text, annotations: [] as unknown[], logprobs: [] as unknown[] };
}

/** A `function_call` item for a call the client runs. */
export function functionCallItem(call: ToolCall, status: "in_progress" | "completed" = "completed") {
  return {
    type: "function_call" as const,
    id: `fc_${call.id.replace(/[^A-Za-z0-9]/g, "")}`,
    call_id: call.id,
    name: call.function.name,
    arguments: status === "completed" ? call.function.arguments : "",
    status,
  };
}

/** The Responses API's `usage` (zeros when no model answered: a command's reply). */
export function responseUsage(usage: TokenUsage | undefined) {
  const input = usage?.promptTokens ?? 0;
  const output = usage?.completionTokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: usage?.cachedTokens ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + output,
  };
}

/** The response object in a given state. */
export function responseObject(
  parts: {
    id: string;
    createdAt: number;
    status: "queued" | "in_progress" | "completed" | "failed" | "cancelled";
    output: unknown[];
    usage?: ReturnType<typeof responseUsage> | null | undefined;
    error?: { code: string; message: string } | null | undefined;
  },
  echo: ResponseRequestEcho,
) {
  return {
    id: parts.id,
    object: "response" as const,
    created_at: parts.createdAt,
    background: echo.background === true,
    status: parts.status,
    ...(parts.status === "completed" ? { completed_at: Math.floor(Date.now() / 1000) } : {}),
    error: parts.error ?? null,
    incomplete_details: null,
    instructions: echo.instructions,
    max_output_tokens: null,
    model: echo.model,
    output: parts.output,
    parallel_tool_calls: true,
    previous_response_id: echo.previousResponseId,
    reasoning: { effort: null, summary: null },
    store: echo.store,
    temperature: null,
    text: { format: { type: "text" } },
    tool_choice: "auto",
    tools: echo.tools,
    top_p: null,
    truncation: "disabled",
    usage: parts.usage ?? null,
    user: echo.user ?? null,
    metadata: echo.metadata,
  };
}

export type ResponseObject = ReturnType<typeof responseObject>;
