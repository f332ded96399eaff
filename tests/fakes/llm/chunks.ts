/**
 * Builds OpenAI chat-completions wire objects (stream chunks and whole completions) from a fake step.
 */
import type { FakeLlmMessage, FakeLlmToolCall } from "./types.js";

export interface ResolvedToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Prompt tokens served from the (simulated) prompt cache. */
  prompt_tokens_details?: { cached_tokens: number };
}

/** Splits `text` into up to `pieces` non-empty parts (one part for short text). */
export function splitText(text: string, pieces = 3): string[] {
  if (text.length <= pieces) return text ? [text] : [];
  const size = Math.ceil(text.length / pieces);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

export function resolveToolCalls(calls: FakeLlmToolCall[], nextId: () => string): ResolvedToolCall[] {
  return calls.map((c) => ({
    id: c.id ?? nextId(),
    name: c.name,
    arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments),
  }));
}

/** Text of a message's content, whatever its shape. */
export function messageText(message: FakeLlmMessage | undefined): string {
  const content = message?.content;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => p.text ?? "").join("");
  return "";
}

/**
 * A rough usage figure (chars / 4), enough for tests that read usage. `promptChars`: the length of the
 * request body, which is what it was read from (messages and tools).
 */
export function usageOf(
  promptChars: number,
  text: string,
  calls: ResolvedToolCall[],
  cachedChars = 0,
): Usage {
  const completionChars = text.length + calls.reduce((n, c) => n + c.name.length + c.arguments.length, 0);
  const prompt_tokens = Math.ceil(promptChars / 4);
  const completion_tokens = Math.ceil(completionChars / 4);
  // Like a provider's cache: whole 64-token blocks of the prefix the previous request shared.
  const cached_tokens = Math.min(prompt_tokens, Math.floor(cachedChars / 256) * 64);
  return {
    prompt_tokens,
    completion_tokens,
    total_tokens: prompt_tokens + completion_tokens,
    prompt_tokens_details: { cached_tokens },
  };
}

/** Length of the common prefix of two strings. */
export function commonPrefix(a: string, b: string): number {
  const max = Math.min(a.length, b.length);
  let i = 0;
  while (i < max && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** Stream chunks (without the `[DONE]` line) for one answer, in the shape SDK-NOTES describes. */
export function streamChunks(
  id: string,
  model: string,
  text: string,
  calls: ResolvedToolCall[],
  usage: Usage | undefined,
  pieces = 3,
): object[] {
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: object, finish_reason: string | null = null) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model,
    choices: [{ index: 0, delta, finish_reason, logprobs: null }],
  });
  const out: object[] = [chunk({ role: "assistant", content: "" })];
  for (const piece of splitText(text, pieces)) out.push(chunk({ content: piece }));
  calls.forEach((call, index) => {
    out.push(
      chunk({
        tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }],
      }),
    );
    for (const piece of splitText(call.arguments)) {
      out.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  out.push(chunk({}, calls.length > 0 ? "tool_calls" : "stop"));
  if (usage) out.push({ id, object: "chat.completion.chunk", created, model, choices: [], usage });
  return out;
}

/** A whole (non-streaming) chat.completion object. */
export function completion(
  id: string,
  model: string,
  text: string,
  calls: ResolvedToolCall[],
  usage: Usage,
): object {
  return {
    id,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: text || (calls.length > 0 ? null : ""),
          refusal: null,
          ...(calls.length > 0
            ? {
                tool_calls: calls.map((c) => ({
                  id: c.id,
                  type: "function",
                  function: { name: c.name, arguments: c.arguments },
                })),
              }
            : {}),
        },
        finish_reason: calls.length > 0 ? "tool_calls" : "stop",
        logprobs: null,
      },
    ],
    usage,
  };
}

/** The OpenAI error body for a status. */
export function errorBody(status: number, message: string): object {
  const type =
    status === 401
      ? "invalid_request_error"
      : status === 429
        ? "rate_limit_exceeded"
        : status >= 500
          ? "server_error"
          : "invalid_request_error";
  return { error: { message, type, param: null, code: status === 401 ? "invalid_api_key" : null } };
}
