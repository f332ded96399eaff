/**
 * The request of `POST /v1/responses`, read into a turn: the new user text, the client's outputs of
 * its function calls, the earlier conversation a stateless request carries, its function tools and
 * instructions. Every refusal names the field (`input[2].call_id`) and says what to send instead.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { HeraldError } from "../../core/errors.js";
import { CLIENT_PENDING } from "../../core/turn-steps.js";
import type { ChatMessage, ClientTool, ClientToolCalls, ToolCall } from "../../core/types.js";
import { readJsonBody } from "./parse.js";
import { fieldName, writeError } from "./respond.js";
import type { ResponseRequestEcho } from "./responses-body.js";

/** The fields of a Responses request Herald reads; the others are accepted and ignored. */
export const responsesRequestSchema = z.looseObject({
  model: z.string().optional(),
  input: z.union([z.string(), z.array(z.looseObject({ type: z.string().optional() }))]),
  instructions: z.string().nullish(),
  previous_response_id: z.string().min(1).max(200).nullish(),
  store: z.boolean().nullish(),
  stream: z.boolean().nullish(),
  background: z.boolean().nullish(),
  user: z.string().max(256).optional(),
  tools: z
    .array(
      z.looseObject({
        type: z.string(),
        name: z.string().optional(),
        description: z.string().nullish(),
        parameters: z.record(z.string(), z.unknown()).nullish(),
      }),
    )
    .optional(),
  metadata: z.record(z.string(), z.string()).nullish(),
});

export type ResponsesRequest = z.infer<typeof responsesRequestSchema>;

/** A refused request: the field (`param`) and what is wrong with it. */
export class InputProblem extends Error {
  constructor(
    readonly param: string,
    message: string,
  ) {
    super(message);
    this.name = "InputProblem";
  }
}

/** One input item, normalised. `at` is its index in `input`. */
type Item =
  | { kind: "message"; at: number; role: "user" | "assistant" | "system"; text: string }
  | { kind: "call"; at: number; call: ToolCall }
  | { kind: "output"; at: number; callId: string; output: string };

/** What a request asks of its turn. */
export interface ResponsesTurn {
  /** The new user text ("" when the request only answers function calls). */
  text: string;
  /** Earlier conversation of a stateless request (seeds a new session). */
  context: ChatMessage[];
  /** The client's outputs, by call id, in the order given. */
  outputs: { callId: string; output: string; at: number }[];
  /** The step those outputs complete, when the request itself carries its function_call items. */
  step?: ChatMessage[] | undefined;
}

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The client's function tools. @throws InputProblem for a tool that is not a named function tool. */
export function clientToolsOf(tools: ResponsesRequest["tools"]): ClientTool[] {
  return (tools ?? []).map((t, i) => {
    if (t.type !== "function")
      throw new InputProblem(
        `tools[${i}].type`,
        `Herald runs its own tools (web, files, terminal, memory…) itself; declare only function tools, which your client runs ('${t.type}' is not one).`,
      );
    if (!t.name || !TOOL_NAME.test(t.name))
      throw new InputProblem(
        `tools[${i}].name`,
        "A function tool needs a name of 1–64 letters, digits, '_' or '-'.",
      );
    return {
      name: t.name,
      ...(t.description ? { description: t.description } : {}),
      ...(t.parameters ? { parameters: t.parameters } : {}),
    };
  });
}

/** The text of a content (a string, or text parts). */
function contentText(content: unknown, param: string): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content))
    throw new InputProblem(param, "Send the content as a string or an array of input_text parts.");
  return content
    .map((part: unknown, j) => {
      const p = (part ?? {}) as { type?: unknown; text?: unknown };
      if (
        (p.type === "input_text" || p.type === "output_text" || p.type === "text") &&
        typeof p.text === "string"
      )
        return p.text;
      throw new InputProblem(
        `${param}[${j}].type`,
        `Herald reads text parts here (input_text, output_text); '${String(p.type)}' is not supported: send files through a chat platform, or their text.`,
      );
    })
    .join("\n");
}

function stringField(item: Record<string, unknown>, field: string, at: number): string {
  const value = item[field];
  if (typeof value !== "string" || (field !== "arguments" && value === ""))
    throw new InputProblem(
      `input[${at}].${field}`,
      `A ${String(item.type)} item needs '${field}' as a string.`,
    );
  return value;
}

const ROLES = { user: "user", assistant: "assistant", system: "system", developer: "system" } as const;

/** One input item normalised, or undefined for an item Herald skips (a reasoning item). */
function itemOf(raw: Record<string, unknown>, at: number): Item | undefined {
  const type = raw.type ?? (raw.role !== undefined ? "message" : undefined);
  switch (type) {
    case "message": {
      const role = ROLES[raw.role as keyof typeof ROLES];
      if (!role)
        throw new InputProblem(
          `input[${at}].role`,
          "A message's role is 'user', 'assistant', 'system' or 'developer'.",
        );
      return { kind: "message", at, role, text: contentText(raw.content, `input[${at}].content`) };
    }
    case "function_call": {
      const call: ToolCall = {
        id: stringField(raw, "call_id", at),
        type: "function",
        function: { name: stringField(raw, "name", at), arguments: stringField(raw, "arguments", at) },
      };
      return { kind: "call", at, call };
    }
    case "function_call_output": {
      const output =
        typeof raw.output === "string" ? raw.output : contentText(raw.output, `input[${at}].output`);
      return { kind: "output", at, callId: stringField(raw, "call_id", at), output };
    }
    case "reasoning":
      return undefined;
    default:
      throw new InputProblem(
        `input[${at}].type`,
        `Herald takes message, function_call and function_call_output items; '${String(type)}' is not one.`,
      );
  }
}

/** Earlier items as session messages: consecutive calls become one assistant message, outputs its results. */
function contextOf(items: readonly Item[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const item of items) {
    if (item.kind === "message") out.push({ role: item.role, content: item.text } as ChatMessage);
    else if (item.kind === "output")
      out.push({ role: "tool", content: item.output, tool_call_id: item.callId });
    else {
      const last = out.at(-1);
      if (last?.role === "assistant") last.tool_calls = [...(last.tool_calls ?? []), item.call];
      else out.push({ role: "assistant", content: null, tool_calls: [item.call] });
    }
  }
  return out;
}

/**
 * Reads `input` into a turn. With `continuing` (a `previous_response_id`) the input may hold only the
 * new user messages and outputs; without it, earlier items seed the session and the function_call
 * items before trailing outputs are the step those outputs complete.
 * @throws InputProblem naming the field.
 */
export function turnOf(input: ResponsesRequest["input"], continuing: boolean): ResponsesTurn {
  if (typeof input === "string") {
    if (!input.trim()) throw new InputProblem("input", "The input is empty: send the user's message.");
    return { text: input, context: [], outputs: [] };
  }
  const items = input.flatMap((raw, at) => itemOf(raw, at) ?? []);
  let end = items.length;
  const texts: string[] = [];
  while (
    end > 0 &&
    items[end - 1]?.kind === "message" &&
    (items[end - 1] as { role: string }).role === "user"
  )
    texts.unshift((items[--end] as { text: string }).text);
  const outputs: ResponsesTurn["outputs"] = [];
  while (end > 0 && items[end - 1]?.kind === "output") {
    const o = items[--end] as Extract<Item, { kind: "output" }>;
    outputs.unshift({ callId: o.callId, output: o.output, at: o.at });
  }
  const text = texts.join("\n\n");
  if (!text.trim() && outputs.length === 0) {
    const last = input.length - 1;
    throw new InputProblem(
      last >= 0 ? `input[${last}]` : "input",
      "The input must end with a user message, or with function_call_output items answering the model's function calls.",
    );
  }
  const earlier = items.slice(0, end);
  if (continuing) {
    const extra = earlier[0];
    if (extra)
      throw new InputProblem(
        `input[${extra.at}]`,
        `With previous_response_id the input holds only the new user message and function_call_output items; the conversation before is Herald's already (this is a ${extra.kind === "call" ? "function_call" : extra.kind} item).`,
      );
    return { text, context: [], outputs };
  }
  if (outputs.length === 0) return { text, context: contextOf(earlier), outputs };
  // A stateless continuation: the calls just before the outputs (and the text said with them) are the step.
  let start = end;
  while (start > 0 && earlier[start - 1]?.kind === "call") start--;
  const calls = earlier.slice(start).map((i) => (i as Extract<Item, { kind: "call" }>).call);
  const said = earlier[start - 1];
  const withText = said?.kind === "message" && said.role === "assistant";
  if (withText) start--;
  const known = new Set(calls.map((c) => c.id));
  const stray = outputs.find((o) => !known.has(o.callId));
  if (stray)
    throw new InputProblem(
      `input[${stray.at}].call_id`,
      `No function_call item with call_id '${stray.callId}' comes before this output: send the response's function_call item before its output, or continue with previous_response_id.`,
    );
  const assistant: ChatMessage = {
    role: "assistant",
    content: withText ? (said as { text: string }).text : null,
    tool_calls: calls,
  };
  const step: ChatMessage[] = [assistant, ...calls.map((c) => pendingResult(c.id))];
  return { text, context: contextOf(earlier.slice(0, start)), outputs, step };
}

/** A client call's placeholder result in a step the request itself carries (replaced by its output). */
function pendingResult(callId: string): ChatMessage {
  return { role: "tool", content: CLIENT_PENDING, tool_call_id: callId };
}

/**
 * Checks the outputs against the calls a stored response waits for (`pending`).
 * @throws InputProblem for an output of no waiting call, or a waiting call without output.
 */
export function checkOutputs(turn: ResponsesTurn, pending: ClientToolCalls | undefined): void {
  const waiting = new Map((pending?.calls ?? []).map((c) => [c.id, c.function.name]));
  const stray = turn.outputs.find((o) => !waiting.has(o.callId));
  if (stray)
    throw new InputProblem(
      `input[${stray.at}].call_id`,
      waiting.size
        ? `The previous response made no function call '${stray.callId}'; it waits for ${[...waiting.keys()].join(", ")}.`
        : `The previous response made no function calls; '${stray.callId}' answers none.`,
    );
  const given = new Set(turn.outputs.map((o) => o.callId));
  const missing = [...waiting].find(([id]) => !given.has(id));
  if (missing)
    throw new InputProblem(
      "input",
      `The previous response waits for the output of its function call '${missing[0]}' (${missing[1]}): send a function_call_output item for each call.`,
    );
}

/** The request's body, parsed, or the problem with it. */
export async function readRequest(
  req: IncomingMessage,
): Promise<{ body: ResponsesRequest } | { problem: InputProblem }> {
  let raw: unknown;
  try {
    raw = await readJsonBody(req);
  } catch (err) {
    return {
      problem: new InputProblem("body", err instanceof HeraldError ? err.message : "Invalid JSON body."),
    };
  }
  const parsed = responsesRequestSchema.safeParse(raw);
  if (parsed.success) return { body: parsed.data };
  const issue = parsed.error.issues[0];
  const param = fieldName(issue?.path ?? []) || "body";
  return { problem: new InputProblem(param, `'${param}': ${issue?.message ?? "invalid"}`) };
}

export function badRequest(res: ServerResponse, problem: InputProblem): void {
  const param = problem.param === "body" ? null : problem.param;
  writeError(res, 400, `Invalid request: ${problem.message}`, "invalid_request_error", {
    code: "invalid_request_error",
    param,
  });
}

export function echoOf(body: ResponsesRequest): ResponseRequestEcho {
  return {
    model: body.model ?? "herald",
    instructions: body.instructions ?? null,
    previousResponseId: body.previous_response_id ?? null,
    store: body.store !== false,
    tools: body.tools ?? [],
    metadata: body.metadata ?? {},
    user: body.user,
    background: body.background === true,
  };
}
