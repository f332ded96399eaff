/**
 * The steps a turn resumes or completes: a held call's step once its answer is known, and the step an
 * API client's tool outputs complete. Pure functions over the turn contracts in `turn.ts`.
 */
import type { TurnInput, TurnResume } from "./turn.js";
import type { ChatMessage, ClientToolResults } from "./types.js";

/**
 * The messages a held step becomes once the held call's result is `content`: the step with that result
 * in place, or (no step) an assistant message making the call and its result.
 */
export function resumedStep(
  held: Pick<TurnResume, "approvalId" | "call" | "step">,
  content: string,
): ChatMessage[] {
  if (held.step?.some((m) => m.role === "tool" && m.tool_call_id === held.call.id))
    return held.step.map((m) =>
      m.role === "tool" && m.tool_call_id === held.call.id ? { ...m, content } : m,
    );
  // Its own id: a child's call id may repeat one of the session's.
  const id = `approved_${held.approvalId.replaceAll("-", "").slice(0, 12)}`;
  return [
    { role: "assistant", content: null, tool_calls: [{ ...held.call, id }] },
    { role: "tool", content, tool_call_id: id },
  ];
}

/** A client call's result in its step while the API client runs it; the client's output replaces it. */
export const CLIENT_PENDING = "(run by the client; its output comes with the next request)";

/**
 * The step the client's outputs complete: each placeholder replaced by its call's output (a call the
 * client sent none for says so).
 */
export function completedClientStep(results: ClientToolResults): ChatMessage[] {
  const outputs = new Map(results.outputs.map((o) => [o.callId, o.output]));
  return results.step.map((m) =>
    m.role === "tool" && m.content === CLIENT_PENDING
      ? { ...m, content: outputs.get(m.tool_call_id) ?? "(the client sent no output for this call)" }
      : m,
  );
}

/** The messages a turn that could not run keeps: its user message, after the step its client outputs complete. */
export function inputMessages(input: TurnInput): ChatMessage[] {
  if (!input.clientResults) return [{ role: "user", content: input.text }];
  const step = completedClientStep(input.clientResults);
  return input.text ? [...step, { role: "user", content: input.text }] : step;
}
