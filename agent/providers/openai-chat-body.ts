/**
 * The body of a Chat Completions request, built without the openai SDK: the model client, the API
 * server and the tests build bodies with it, and it must not pull the SDK into the start-up path (the
 * chat transport, which needs the SDK, loads with the first model request).
 */
import type { ModelMessage, ReasoningEffort, TransportRequest } from "./types.js";

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
  request: Pick<TransportRequest, "messages" | "tools" | "stableCount">,
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
  const plain = withoutReasoning(request.messages);
  const messages = extras.cacheMarkers ? withCacheMarkers(plain, request.stableCount) : plain;
  const reasoning = extras.reasoningEffort
    ? `,"reasoning_effort":${JSON.stringify(extras.reasoningEffort)}`
    : "";
  // Everything else before messages: the body's bytes then grow only at the end from one turn to the
  // next (the tool schemas, the largest part, are the same every turn), as a prompt cache sees the
  // prompt, and the fixed fields are part of the repeated prefix instead of following the new messages.
  return `{"model":${JSON.stringify(model)},"stream":true,"stream_options":{"include_usage":true}${reasoning}${tools},"messages":${JSON.stringify(messages)}}`;
}

/**
 * The messages without another protocol's reasoning (an answer of a fallback on another API within
 * the turn): chat completions has no field for it. The same array when there is none (the usual case).
 */
function withoutReasoning(messages: readonly ModelMessage[]): readonly ModelMessage[] {
  if (!messages.some((m) => m.role === "assistant" && m.reasoning)) return messages;
  return messages.map((m) => {
    if (m.role !== "assistant" || !m.reasoning) return m;
    const { reasoning: _dropped, ...rest } = m;
    return rest;
  });
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
