/**
 * The OpenAI Responses transport (`POST /responses`, reasoning models). The openai SDK sends the
 * request and maps statuses to its errors; the body is built here (each tool's JSON once) and the
 * events are read with eventsource-parser, as the chat transport reads its chunks.
 *
 * The session's messages become input items: system and user messages as messages (images as
 * `input_image`), an assistant's text as an assistant message, its tool calls as `function_call`
 * items, tool results as `function_call_output`. Requests are stateless (`store: false`) and ask for
 * `reasoning.encrypted_content`: an answer's reasoning items (and its function calls with their item
 * ids, which the API ties to them) come back on its message (`reasoning`) and go again, in order, in
 * the next step of the turn, as the API wants for reasoning models. A later turn's history (from the
 * session store) has neither: its calls go without item ids, which the API takes.
 */
import { StringDecoder } from "node:string_decoder";
import { createParser } from "eventsource-parser";
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from "openai";
import type { ToolCall } from "../../core/types.js";
import { cancelledError, endedEarly, refusal } from "./failures.js";
import { classifyOpenAIFailure } from "./openai-chat.js";
import { clientPerProvider } from "./sdk-clients.js";
import type {
  ModelMessage,
  ModelTool,
  ModelTransport,
  ResolvedModel,
  TokenUsage,
  TransportAnswer,
  TransportOptions,
  TransportRequest,
} from "./types.js";

/** Builds the transport (one SDK client per provider). */
export function createOpenAIResponsesTransport(options: TransportOptions): ModelTransport {
  const sdkOf = clientPerProvider(options, (settings) => new OpenAI(settings));
  return {
    api: "openai-responses",
    stream: (target, request) => streamResponse(sdkOf(target.provider), target, request, options.timeoutMs),
    classify: classifyOpenAIFailure,
  };
}

type Item = Record<string, unknown>;

/** A tool's JSON in the Responses shape, made once per schema object. */
const toolJson = new WeakMap<object, string>();

function toolText(tool: ModelTool): string {
  let json = toolJson.get(tool);
  if (json === undefined) {
    const fn = tool.type === "function" ? tool.function : undefined;
    json = JSON.stringify({
      type: "function",
      name: fn?.name ?? "",
      description: fn?.description ?? "",
      parameters: fn?.parameters ?? { type: "object", properties: {} },
      strict: false,
    });
    toolJson.set(tool, json);
  }
  return json;
}

/** The input items of `messages` (another provider's or protocol's reasoning is dropped). */
export function responsesInput(messages: readonly ModelMessage[], provider: string): Item[] {
  const items: Item[] = [];
  for (const m of messages) {
    if (m.role === "system") items.push({ role: "system", content: m.content });
    else if (m.role === "tool")
      items.push({ type: "function_call_output", call_id: m.tool_call_id, output: m.content });
    else if (m.role === "user") {
      if (typeof m.content === "string") items.push({ role: "user", content: m.content });
      else {
        const parts = m.content.flatMap((p): Item[] =>
          p.type === "text"
            ? [{ type: "input_text", text: p.text }]
            : p.type === "image_url"
              ? [{ type: "input_image", image_url: p.image_url.url, detail: p.image_url.detail ?? "auto" }]
              : p.type === "file" && p.file.file_data
                ? [{ type: "input_file", filename: p.file.filename ?? "file", file_data: p.file.file_data }]
                : [],
        );
        items.push({ role: "user", content: parts });
      }
    } else {
      const r = m.reasoning;
      const own = r?.api === "openai-responses" && r.provider === provider ? (r.items as Item[]) : [];
      items.push(...own.filter((i) => i["type"] === "reasoning"));
      if (m.content) items.push({ role: "assistant", content: m.content });
      for (const call of m.tool_calls ?? []) {
        // The call as the API gave it (with its item id, tied to its reasoning), else rebuilt.
        const given = own.find((i) => i["type"] === "function_call" && i["call_id"] === call.id);
        items.push(
          given ?? {
            type: "function_call",
            call_id: call.id,
            name: call.function.name,
            arguments: call.function.arguments,
          },
        );
      }
    }
  }
  return items;
}

/** The JSON body of a streaming Responses request. */
export function responsesBody(target: ResolvedModel, request: TransportRequest): string {
  const effort = target.info?.reasoning ? request.reasoningEffort : undefined;
  let head = `{"model":${JSON.stringify(target.model)},"stream":true,"store":false`;
  if (effort) head += `,"reasoning":{"effort":"${effort}"},"include":["reasoning.encrypted_content"]`;
  if (request.tools?.length) head += `,"tools":[${request.tools.map(toolText).join(",")}]`;
  return `${head},"input":${JSON.stringify(responsesInput(request.messages, target.provider.name))}}`;
}

/** What the events of one answer add up to. */
interface Answer {
  text: string;
  refused: string;
  calls: Map<number, { id: string; name: string; arguments: string }>;
  reasoning: Item[];
  usage: TokenUsage;
  status: string | undefined;
}

/** A streamed event, loosely typed: only the fields read here. */
interface WireEvent {
  type: string;
  output_index?: number;
  delta?: string;
  item?: Item;
  response?: {
    status?: string;
    error?: { code?: string; message?: string } | null;
    incomplete_details?: { reason?: string } | null;
    usage?: {
      input_tokens?: number;
      output_tokens?: number;
      input_tokens_details?: { cached_tokens?: number };
      output_tokens_details?: { reasoning_tokens?: number };
    } | null;
  };
  code?: string;
  message?: string;
}

function onEvent(event: WireEvent, answer: Answer, request: TransportRequest): void {
  switch (event.type) {
    case "response.output_text.delta":
      if (event.delta) {
        answer.text += event.delta;
        request.onTextDelta?.(event.delta);
      }
      return;
    case "response.refusal.delta":
      answer.refused += event.delta ?? "";
      return;
    case "response.output_item.done": {
      const item = event.item;
      if (item?.["type"] === "function_call") {
        answer.calls.set(event.output_index ?? answer.calls.size, {
          id: String(item["call_id"]),
          name: String(item["name"]),
          arguments: String(item["arguments"] ?? ""),
        });
      }
      if (item?.["type"] === "function_call" || item?.["type"] === "reasoning") {
        // Sent back as given (ids, summary, encrypted content); status is output-only.
        const { status: _status, ...rest } = item;
        answer.reasoning.push(rest);
      }
      return;
    }
    case "response.completed":
    case "response.incomplete": {
      answer.status = event.response?.status ?? event.type.slice(9);
      const u = event.response?.usage;
      if (u) {
        answer.usage.promptTokens = u.input_tokens ?? 0;
        answer.usage.completionTokens = u.output_tokens ?? 0;
        answer.usage.cachedTokens = u.input_tokens_details?.cached_tokens ?? 0;
        answer.usage.reasoningTokens = u.output_tokens_details?.reasoning_tokens ?? 0;
      }
      return;
    }
    case "response.failed":
    case "error": {
      const error = event.response?.error ?? { code: event.code, message: event.message };
      // A failure after the answer started: the server's, worth another try (as a chat `error` chunk).
      throw new APIError(undefined, error ?? {}, error?.message ?? "the response failed", undefined);
    }
  }
}

async function streamResponse(
  sdk: OpenAI,
  target: ResolvedModel,
  request: TransportRequest,
  timeoutMs: number,
): Promise<TransportAnswer> {
  const outer = request.signal;
  let timedOut = false;
  let idle: NodeJS.Timeout | undefined;
  try {
    const response = await sdk
      .post("/responses", {
        body: responsesBody(target, request),
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
      text: "",
      refused: "",
      calls: new Map(),
      reasoning: [],
      usage: {
        promptTokens: 0,
        completionTokens: 0,
        cachedTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
      },
      status: undefined,
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

function finish(answer: Answer, target: ResolvedModel): TransportAnswer {
  const calls: ToolCall[] = [...answer.calls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, c]) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }));
  if (!answer.text && calls.length === 0) {
    if (answer.refused) throw refusal("refusal");
    if (!answer.status) throw endedEarly();
  }
  const finishReason =
    calls.length > 0
      ? "tool_calls"
      : answer.status === "incomplete"
        ? "length"
        : answer.status
          ? "stop"
          : undefined;
  return {
    message: {
      role: "assistant",
      content: answer.text || (calls.length > 0 ? null : ""),
      ...(calls.length > 0 ? { tool_calls: calls } : {}),
      ...(answer.reasoning.some((i) => i["type"] === "reasoning")
        ? { reasoning: { api: "openai-responses", provider: target.provider.name, items: answer.reasoning } }
        : {}),
    },
    usage: answer.usage,
    finishReason,
  };
}

/** Reads the answer's server-sent events until the body ends (see the chat transport's `readChunks`). */
async function readEvents(response: Response, onBytes: () => void, onData: (event: WireEvent) => void) {
  if (!response.body) throw new APIConnectionError({ message: "the answer had no body" });
  let failure: unknown;
  const parser = createParser({
    onEvent(event) {
      if (failure !== undefined) return;
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
