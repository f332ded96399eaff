/**
 * The Amazon Bedrock transport: Converse's streaming call (`ConverseStream`) through
 * `@aws-sdk/client-bedrock-runtime`, loaded on first use. One SDK client per provider: its region read
 * from the provider's `base_url` (`bedrock-runtime.<region>.amazonaws.com`), else `AWS_REGION`; any other
 * `base_url` is the client's endpoint (a gateway, or the fake API in tests). Credentials come from the
 * standard AWS chain (env `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`, profiles, SSO, instance roles);
 * the SDK signs each request (SigV4). The SDK's own retries are off: the model client retries.
 *
 * The session's messages become Converse messages: leading system messages the `system` blocks, a
 * later system note a text block of its user turn; the assistant's calls `toolUse` blocks; tool results
 * `toolResult` blocks of a user turn; images (data URLs) `image` blocks with their bytes. With the
 * model's `cache_control: true`, a `cachePoint` follows the system blocks and the tools. Usage reports
 * the cache's read and written tokens (`promptTokens` counts all input, as elsewhere).
 */
import {
  BedrockRuntimeClient,
  BedrockRuntimeServiceException,
  type ContentBlock,
  ConverseStreamCommand,
  type ConverseStreamCommandInput,
  type ConverseStreamOutput,
  type ImageFormat,
  type Message,
  type SystemContentBlock,
  type Tool,
} from "@aws-sdk/client-bedrock-runtime";
import type { ToolCall } from "../../core/types.js";
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
  ProviderSpec,
  ResolvedModel,
  TokenUsage,
  TransportAnswer,
  TransportOptions,
  TransportRequest,
} from "./types.js";

/** Builds the transport. */
export function createBedrockTransport(options: TransportOptions): ModelTransport {
  const clients = new WeakMap<ProviderSpec, BedrockRuntimeClient>();
  const clientOf = (provider: ProviderSpec) => {
    let client = clients.get(provider);
    if (!client) {
      client = new BedrockRuntimeClient(clientConfig(provider));
      clients.set(provider, client);
    }
    return client;
  };
  return {
    api: "bedrock",
    stream: (target, request) => streamBedrock(clientOf(target.provider), target, request, options.timeoutMs),
    classify: classifyBedrockFailure,
  };
}

const AWS_HOST = /^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com$/;

/** The SDK client's region and endpoint for `provider` (AWS's own host: its region, no override). */
export function clientConfig(provider: ProviderSpec): { region: string; endpoint?: string; maxAttempts: 1 } {
  const host = URL.canParse(provider.baseUrl) ? new URL(provider.baseUrl).hostname : "";
  const region = AWS_HOST.exec(host)?.[1];
  if (region) return { region, maxAttempts: 1 };
  return {
    region: process.env["AWS_REGION"] ?? process.env["AWS_DEFAULT_REGION"] ?? "us-east-1",
    endpoint: provider.baseUrl.replace(/\/+$/, ""),
    maxAttempts: 1,
  };
}

/** The Converse system blocks and messages of `messages`. */
export function bedrockMessages(messages: readonly ModelMessage[]): {
  system: SystemContentBlock[];
  messages: Message[];
} {
  const system: SystemContentBlock[] = [];
  const out: Message[] = [];
  const add = (role: "user" | "assistant", blocks: ContentBlock[]) => {
    if (blocks.length === 0) return;
    const last = out.at(-1);
    if (last?.role === role) last.content!.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const m of messages) {
    if (m.role === "system") {
      if (out.length === 0) system.push({ text: m.content });
      else add("user", [{ text: m.content }]);
    } else if (m.role === "user") {
      add("user", userBlocks(m.content));
    } else if (m.role === "tool") {
      add("user", [
        { toolResult: { toolUseId: m.tool_call_id, content: [{ text: m.content || "(empty)" }] } },
      ]);
    } else {
      const blocks: ContentBlock[] = m.content ? [{ text: m.content }] : [];
      for (const call of m.tool_calls ?? []) {
        blocks.push({
          toolUse: {
            toolUseId: call.id,
            name: call.function.name,
            input: parseArgs(call.function.arguments) as never,
          },
        });
      }
      add("assistant", blocks.length ? blocks : [{ text: "(no answer)" }]);
    }
  }
  if (out[0]?.role === "assistant")
    out.unshift({ role: "user", content: [{ text: "(earlier in this conversation)" }] });
  return { system, messages: out };
}

const IMAGE_FORMATS = new Set(["png", "jpeg", "gif", "webp"]);

function userBlocks(content: ModelMessage["content"]): ContentBlock[] {
  if (typeof content === "string") return content ? [{ text: content }] : [];
  const blocks: ContentBlock[] = [];
  for (const p of content ?? []) {
    if (typeof p === "string") continue;
    if (p.type === "text" && p.text) blocks.push({ text: p.text });
    else if (p.type === "image_url") {
      const data = /^data:image\/([^;,]+);base64,(.*)$/s.exec(p.image_url.url);
      const format = data?.[1] === "jpg" ? "jpeg" : data?.[1];
      blocks.push(
        data && format && IMAGE_FORMATS.has(format)
          ? { image: { format: format as ImageFormat, source: { bytes: Buffer.from(data[2]!, "base64") } } }
          : { text: `[image: ${p.image_url.url}]` },
      );
    }
  }
  return blocks;
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

/** The ConverseStream input of one request. */
export function bedrockInput(target: ResolvedModel, request: TransportRequest): ConverseStreamCommandInput {
  const info = target.info;
  const cache = info?.cacheControl === true;
  const { system, messages } = bedrockMessages(request.messages);
  if (cache && system.length) system.push({ cachePoint: { type: "default" } });
  const tools: Tool[] = (request.tools ?? []).map(toolSpec);
  if (cache && tools.length) tools.push({ cachePoint: { type: "default" } });
  return {
    modelId: target.model,
    messages,
    ...(system.length ? { system } : {}),
    ...(tools.length ? { toolConfig: { tools } } : {}),
    ...(info?.maxOutputTokens ? { inferenceConfig: { maxTokens: info.maxOutputTokens } } : {}),
  };
}

function toolSpec(tool: ModelTool): Tool {
  const fn = tool.type === "function" ? tool.function : undefined;
  return {
    toolSpec: {
      name: fn?.name ?? "",
      description: fn?.description || (fn?.name ?? "tool"),
      inputSchema: { json: (fn?.parameters ?? { type: "object", properties: {} }) as never },
    },
  };
}

async function streamBedrock(
  client: BedrockRuntimeClient,
  target: ResolvedModel,
  request: TransportRequest,
  timeoutMs: number,
): Promise<TransportAnswer> {
  const outer = request.signal;
  if (outer?.aborted) throw cancelledError(outer.reason);
  const controller = new AbortController();
  const onAbort = () => controller.abort(outer?.reason);
  outer?.addEventListener("abort", onAbort, { once: true });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  try {
    const output = await client.send(new ConverseStreamCommand(bedrockInput(target, request)), {
      abortSignal: controller.signal,
    });
    if (!output.stream) throw endedEarly();
    const answer = newAnswer();
    for await (const event of output.stream) {
      timer.refresh();
      addEvent(answer, event, request);
    }
    if (outer?.aborted) throw cancelledError(outer.reason);
    return finishAnswer(answer);
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

/** What the events of one answer add up to. */
interface BedrockAnswer {
  text: string;
  calls: ToolCall[];
  /** Tool input JSON being streamed, by content block index. */
  inputs: Map<number, { call: ToolCall; json: string }>;
  stop: string | undefined;
  usage: TokenUsage;
}

function newAnswer(): BedrockAnswer {
  return {
    text: "",
    calls: [],
    inputs: new Map(),
    stop: undefined,
    usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
  };
}

/** Adds one stream event: text to `onTextDelta` at once, tool calls as their input completes, usage. */
function addEvent(answer: BedrockAnswer, event: ConverseStreamOutput, request: TransportRequest): void {
  if (event.contentBlockStart?.start?.toolUse) {
    const { toolUseId, name } = event.contentBlockStart.start.toolUse;
    const call: ToolCall = {
      id: toolUseId ?? "",
      type: "function",
      function: { name: name ?? "", arguments: "" },
    };
    answer.calls.push(call);
    answer.inputs.set(event.contentBlockStart.contentBlockIndex ?? 0, { call, json: "" });
  } else if (event.contentBlockDelta?.delta) {
    const { delta, contentBlockIndex } = event.contentBlockDelta;
    if (delta.text) {
      answer.text += delta.text;
      request.onTextDelta?.(delta.text);
    } else if (delta.toolUse?.input !== undefined) {
      const pending = answer.inputs.get(contentBlockIndex ?? 0);
      if (pending) pending.json += delta.toolUse.input;
    }
  } else if (event.contentBlockStop) {
    const pending = answer.inputs.get(event.contentBlockStop.contentBlockIndex ?? 0);
    if (pending) pending.call.function.arguments = pending.json || "{}";
  } else if (event.messageStop) {
    answer.stop = event.messageStop.stopReason;
  } else if (event.metadata?.usage) {
    const u = event.metadata.usage;
    const read = u.cacheReadInputTokens ?? 0;
    const write = u.cacheWriteInputTokens ?? 0;
    answer.usage.promptTokens = (u.inputTokens ?? 0) + read + write;
    answer.usage.completionTokens = u.outputTokens ?? 0;
    answer.usage.cachedTokens = read;
    answer.usage.cacheWriteTokens = write;
  }
}

const REFUSALS = new Set(["guardrail_intervened", "content_filtered"]);

function finishAnswer(answer: BedrockAnswer): TransportAnswer {
  const { text, calls, stop } = answer;
  for (const c of calls) c.function.arguments ||= "{}";
  if (stop && REFUSALS.has(stop) && calls.length === 0) throw refusal(stop);
  if (!text && calls.length === 0 && !stop) throw endedEarly();
  return {
    message: {
      role: "assistant",
      content: text || (calls.length > 0 ? null : ""),
      ...(calls.length > 0 ? { tool_calls: calls } : {}),
    },
    usage: answer.usage,
    finishReason:
      calls.length > 0 || stop === "tool_use"
        ? "tool_calls"
        : stop === "max_tokens"
          ? "length"
          : stop === "end_turn" || stop === "stop_sequence"
            ? "stop"
            : stop,
  };
}

/** Error names that mean the credentials were refused or lack the permission. */
const AUTH_ERRORS =
  /^(?:AccessDenied|UnrecognizedClient|InvalidSignature|ExpiredToken|IncompleteSignature|MissingAuthenticationToken|InvalidClientTokenId)/;

/**
 * Classifies what the SDK threw: its service exceptions are named after AWS's error type
 * (`x-amzn-errortype`), with the HTTP status in `$metadata` (0 for an exception inside the stream).
 */
export function classifyBedrockFailure(err: unknown): AttemptFailure {
  if (!(err instanceof BedrockRuntimeServiceException)) return unknownFailure(err);
  const name = err.name;
  const detail = err.message || name;
  const given = err.$metadata?.httpStatusCode ?? 0;
  const headers = new Headers();
  const retryAfter = (err.$response?.headers as Record<string, string> | undefined)?.["retry-after"];
  if (retryAfter) headers.set("retry-after", retryAfter);
  // Inside the stream an exception has no status of its own: its name gives it.
  let status = given || 500;
  if (AUTH_ERRORS.test(name)) status = name.startsWith("AccessDenied") ? 403 : 401;
  else if (name.startsWith("Throttling")) status = 429;
  else if (name.startsWith("ModelTimeout")) status = 408;
  else if (/^(?:ServiceUnavailable|InternalServer|ModelStreamError|ModelNotReady)/.test(name) && status < 500)
    status = 503;
  else if (name.startsWith("Validation")) status = 400;
  const failure = statusFailure(status, detail, headers, err);
  // Bedrock says "Input is too long for requested model", or names the context window.
  if (status === 400 && /too long|context/i.test(detail)) {
    return { ...failure, category: "context-too-long", contextTooLong: true, retry: false };
  }
  return failure;
}
