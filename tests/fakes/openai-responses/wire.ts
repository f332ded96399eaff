/**
 * The Responses API's wire objects as the fake builds them: the streamed events of an answer
 * (response.created … response.completed, with `sequence_number`s, as the openai SDK's ResponseStream
 * accumulates them), and what the real API refuses: a function call output without its call, and a
 * function call sent back with its item id but without the reasoning item that came with it.
 */
import { createHmac } from "node:crypto";
import type {
  FakeResponsesItem,
  FakeResponsesRequest,
  FakeResponsesStep,
  FakeResponsesUsage,
} from "./types.js";

/** The encrypted content the fake gives a reasoning summary (checkable, as the real one is opaque). */
export function encryptReasoning(summary: string): string {
  return `enc_${createHmac("sha256", "fake-responses").update(summary).digest("base64")}`;
}

/** Why the real API would refuse this body, or undefined. `reasoningOf`: call item id → its reasoning's content. */
export function invalidReason(
  body: FakeResponsesRequest,
  reasoningOf: Map<string, string>,
): string | undefined {
  if (typeof body.model !== "string" || !body.model) return "Missing required parameter: 'model'.";
  const input = typeof body.input === "string" ? [] : (body.input ?? []);
  const calls = new Set<string>();
  for (const [i, item] of input.entries()) {
    if (item.type === "function_call") {
      calls.add(String(item.call_id));
      // A call sent back with the item id the API gave it is tied to that answer's reasoning item.
      const needed = item.id ? reasoningOf.get(String(item.id)) : undefined;
      if (needed) {
        const sent = input.slice(0, i).some((p) => p.type === "reasoning" && p.encrypted_content === needed);
        if (!sent) {
          return `Item '${item.id}' of type 'function_call' was provided without its required 'reasoning' item.`;
        }
      }
    }
    if (item.type === "reasoning" && !String(item.encrypted_content ?? "").startsWith("enc_")) {
      return `input[${i}]: The encrypted content for item rs could not be verified.`;
    }
    if (item.type === "function_call_output" && !calls.has(String(item.call_id))) {
      return `No tool call found for function call output with call_id ${item.call_id}.`;
    }
  }
  return undefined;
}

function split(text: string, pieces: number): string[] {
  if (text.length <= pieces) return text ? [text] : [];
  const size = Math.ceil(text.length / pieces);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** The output items of an answer, ids given. */
export function outputItems(
  step: FakeResponsesStep,
  reasoning: boolean,
  nextId: () => string,
): FakeResponsesItem[] {
  const items: FakeResponsesItem[] = [];
  if (reasoning && step.reasoning) {
    items.push({
      type: "reasoning",
      id: `rs_${nextId()}`,
      summary: [{ type: "summary_text", text: step.reasoning }],
      encrypted_content: encryptReasoning(step.reasoning),
    });
  }
  if (step.text !== undefined || step.refusal !== undefined) {
    const part =
      step.refusal !== undefined
        ? { type: "refusal", refusal: step.refusal }
        : { type: "output_text", text: step.text ?? "", annotations: [], logprobs: [] };
    items.push({
      type: "message",
      id: `msg_${nextId()}`,
      role: "assistant",
      status: "completed",
      content: [part as never],
    });
  }
  for (const call of step.toolCalls ?? []) {
    const id = nextId();
    items.push({
      type: "function_call",
      id: `fc_${id}`,
      call_id: call.id ?? `call_${id}`,
      name: call.name,
      arguments: JSON.stringify(call.arguments),
      status: "completed",
    });
  }
  return items;
}

/** The response object (`response.created` with no output, `response.completed` with all of it). */
export function responseObject(
  id: string,
  model: string,
  status: string,
  output: FakeResponsesItem[],
  usage: FakeResponsesUsage | null,
) {
  return {
    id,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status,
    model,
    output,
    usage,
    error: null,
    incomplete_details: null,
    instructions: null,
    parallel_tool_calls: true,
    tool_choice: "auto",
    tools: [],
    temperature: 1,
    top_p: 1,
    metadata: {},
  };
}

/** The SSE events of a streamed answer. */
export function answerEvents(
  id: string,
  model: string,
  items: FakeResponsesItem[],
  usage: FakeResponsesUsage,
  step: FakeResponsesStep,
): string[] {
  let seq = 0;
  const ev = (data: Record<string, unknown>) =>
    `event: ${data["type"]}\ndata: ${JSON.stringify({ ...data, sequence_number: seq++ })}\n\n`;
  const pieces = step.pieces ?? 3;
  const out = [
    ev({ type: "response.created", response: responseObject(id, model, "in_progress", [], null) }),
    ev({ type: "response.in_progress", response: responseObject(id, model, "in_progress", [], null) }),
  ];
  for (const [output_index, item] of items.entries()) {
    if (item.type === "message") {
      const part = (item.content as { type: string; text?: string; refusal?: string }[])[0]!;
      out.push(
        ev({
          type: "response.output_item.added",
          output_index,
          item: { ...item, status: "in_progress", content: [] },
        }),
      );
      const empty =
        part.type === "refusal"
          ? { type: "refusal", refusal: "" }
          : { type: "output_text", text: "", annotations: [], logprobs: [] };
      out.push(
        ev({
          type: "response.content_part.added",
          output_index,
          item_id: item.id,
          content_index: 0,
          part: empty,
        }),
      );
      if (part.type === "refusal") {
        out.push(
          ev({
            type: "response.refusal.delta",
            output_index,
            item_id: item.id,
            content_index: 0,
            delta: part.refusal,
          }),
        );
        out.push(
          ev({
            type: "response.refusal.done",
            output_index,
            item_id: item.id,
            content_index: 0,
            refusal: part.refusal,
          }),
        );
      } else {
        for (const [n, delta] of split(part.text ?? "", pieces).entries()) {
          out.push(
            ev({
              type: "response.output_text.delta",
              output_index,
              item_id: item.id,
              content_index: 0,
              delta,
              logprobs: [],
            }),
          );
          if (n === 0 && step.failMidStream) {
            out.push(
              ev({
                type: "response.failed",
                response: { ...responseObject(id, model, "failed", [], null), error: step.failMidStream },
              }),
            );
            return out;
          }
        }
        out.push(
          ev({
            type: "response.output_text.done",
            output_index,
            item_id: item.id,
            content_index: 0,
            text: part.text,
            logprobs: [],
          }),
        );
      }
      out.push(
        ev({ type: "response.content_part.done", output_index, item_id: item.id, content_index: 0, part }),
      );
    } else if (item.type === "function_call") {
      out.push(
        ev({
          type: "response.output_item.added",
          output_index,
          item: { ...item, arguments: "", status: "in_progress" },
        }),
      );
      for (const delta of split(item.arguments ?? "", pieces)) {
        out.push(
          ev({ type: "response.function_call_arguments.delta", output_index, item_id: item.id, delta }),
        );
      }
      out.push(
        ev({
          type: "response.function_call_arguments.done",
          output_index,
          item_id: item.id,
          arguments: item.arguments,
          name: item.name,
        }),
      );
    } else {
      out.push(
        ev({
          type: "response.output_item.added",
          output_index,
          item: { ...item, summary: [], encrypted_content: null },
        }),
      );
    }
    out.push(ev({ type: "response.output_item.done", output_index, item }));
  }
  out.push(
    ev({ type: "response.completed", response: responseObject(id, model, "completed", items, usage) }),
  );
  return out;
}
