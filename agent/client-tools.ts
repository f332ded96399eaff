/**
 * Tools an API client declares and runs itself (the function tools of `/v1/responses`). The model gets
 * them beside Herald's own; a step that calls one runs Herald's own calls of the step as usual and
 * then ends the turn, handing the client's calls (and the step, kept outside the session) back through
 * the reply. The client's outputs come with its next request: that turn opens with the step, each
 * client call's placeholder replaced by its output, and the model carries on. A step the client never
 * completes stays out of the session (only its text is lost).
 */
import type { ChatCompletionFunctionTool } from "openai/resources/chat/completions";
import { CLIENT_PENDING } from "../core/turn-steps.js";
import type { ChatMessage, ClientTool, ClientToolCalls, ToolCall } from "../core/types.js";

/** A call of Herald's that needs a person's approval, in a step the client's calls end. */
export const HELD_IN_CLIENT_STEP =
  "not run: it needs the user's approval, which a step with the client's tool calls cannot wait for; make this call again on its own.";

/**
 * The request's tools: Herald's (`own`) without those a client tool of the same name replaces, then
 * the client's, in their order. `own` itself when the client declared none.
 */
export function withClientTools(
  own: ChatCompletionFunctionTool[],
  client: readonly ClientTool[] | undefined,
): ChatCompletionFunctionTool[] {
  if (!client?.length) return own;
  const names = new Set(client.map((t) => t.name));
  return [
    ...own.filter((t) => !names.has(t.function.name)),
    ...client.map(
      (t): ChatCompletionFunctionTool => ({
        type: "function",
        function: {
          name: t.name,
          ...(t.description ? { description: t.description } : {}),
          parameters: t.parameters ?? { type: "object", properties: {} },
        },
      }),
    ),
  ];
}

/**
 * The step to hand the client: `assistant` (which made `calls`) and one result per call in order,
 * `contents[i]` for Herald's own and the placeholder for the client's (`isClient`).
 */
export function clientStep(
  assistant: ChatMessage,
  calls: readonly ToolCall[],
  contents: readonly string[],
  isClient: (call: ToolCall) => boolean,
): ClientToolCalls {
  return {
    calls: calls.filter(isClient),
    step: [
      assistant,
      ...calls.map(
        (call, i): ChatMessage => ({
          role: "tool",
          content: isClient(call) ? CLIENT_PENDING : (contents[i] ?? ""),
          tool_call_id: call.id,
        }),
      ),
    ],
  };
}
