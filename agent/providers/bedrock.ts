/**
 * The Amazon Bedrock transport: Converse's streaming call (`ConverseStream`), sent on the model
 * client's keep-alive fetch with the body built here (bedrock-body.ts), signed with SigV4 and its
 * events read from the binary event stream (bedrock-wire.ts), as the other transports send and read
 * theirs. Sending through `@aws-sdk/client-bedrock-runtime`'s `client.send` cost 4.7× the chat
 * transport's CPU per call (an HTTP/2 session per request, its middleware, schema serializers and
 * event-stream deserializers; BENCHMARKS.md). The SDK client is kept per provider for the standard
 * AWS credential chain alone (env `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`, profiles, SSO, instance
 * roles), which it resolves once and refreshes before they expire.
 *
 * The region is read from the provider's `base_url` (`bedrock-runtime.<region>.amazonaws.com`), else
 * `AWS_REGION`; any `base_url` is where requests go (AWS's host, a gateway, or the fake API in tests).
 * Usage reports the cache's read and written tokens (`promptTokens` counts all input, as elsewhere).
 */
import { BedrockRuntimeClient } from "@aws-sdk/client-bedrock-runtime";
import type { ToolCall } from "../../core/types.js";
import { bedrockBody } from "./bedrock-body.js";
import {
  type AwsCredentials,
  BedrockServiceError,
  type EventMessage,
  encodePathSegment,
  eventMessages,
  frameError,
  httpError,
  signRequest,
} from "./bedrock-wire.js";
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
  ModelTransport,
  ProviderSpec,
  ResolvedModel,
  TokenUsage,
  TransportAnswer,
  TransportOptions,
  TransportRequest,
} from "./types.js";

/** Where a provider's requests go and how they are signed. */
interface BedrockEndpoint {
  region: string;
  /** `base_url` without its trailing slash. */
  baseUrl: string;
  credentials: () => Promise<AwsCredentials>;
}

/** Builds the transport. */
export function createBedrockTransport(options: TransportOptions): ModelTransport {
  const fetchFn = options.fetch ?? globalThis.fetch;
  const endpoints = new WeakMap<ProviderSpec, BedrockEndpoint>();
  const endpointOf = (provider: ProviderSpec) => {
    let endpoint = endpoints.get(provider);
    if (!endpoint) {
      const { region, baseUrl } = bedrockRegion(provider);
      // The SDK's resolved credential provider: the default chain, cached until near expiry.
      const client = new BedrockRuntimeClient({ region });
      endpoint = { region, baseUrl, credentials: client.config.credentials };
      endpoints.set(provider, endpoint);
    }
    return endpoint;
  };
  return {
    api: "bedrock",
    stream: (target, request) =>
      streamBedrock(fetchFn, endpointOf(target.provider), target, request, options.timeoutMs),
    classify: classifyBedrockFailure,
  };
}

const AWS_HOST = /^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com$/;

/** The signing region of `provider` (AWS's host names it; else `AWS_REGION`) and its base URL. */
export function bedrockRegion(provider: ProviderSpec): { region: string; baseUrl: string } {
  const host = URL.canParse(provider.baseUrl) ? new URL(provider.baseUrl).hostname : "";
  const region =
    AWS_HOST.exec(host)?.[1] ?? process.env["AWS_REGION"] ?? process.env["AWS_DEFAULT_REGION"] ?? "us-east-1";
  return { region, baseUrl: provider.baseUrl.replace(/\/+$/, "") };
}

async function streamBedrock(
  fetchFn: typeof globalThis.fetch,
  endpoint: BedrockEndpoint,
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
    const url = new URL(`${endpoint.baseUrl}/model/${encodePathSegment(target.model)}/converse-stream`);
    const body = bedrockBody(target, request);
    const headers = await signRequest({
      method: "POST",
      url,
      headers: { ...lowerCase(target.provider.headers), "content-type": "application/json" },
      body,
      region: endpoint.region,
      service: "bedrock",
      credentials: await endpoint.credentials(),
    });
    const response = await fetchFn(url, { method: "POST", headers, body, signal: controller.signal });
    if (!response.ok) throw await httpError(response);
    const answer = newAnswer();
    await readFrames(
      response,
      () => void timer.refresh(),
      (message) => addEvent(answer, message, request),
    );
    if (outer?.aborted) throw cancelledError(outer.reason);
    return finishAnswer(answer, target);
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

function lowerCase(headers: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) out[k.toLowerCase()] = v;
  return out;
}

/** Reads the answer's frames until the body ends; on a throw the connection is closed. */
async function readFrames(
  response: Response,
  onBytes: () => void,
  onMessage: (message: EventMessage) => void,
): Promise<void> {
  if (!response.body) throw endedEarly();
  const chunks = async function* () {
    for await (const bytes of response.body as unknown as AsyncIterable<Uint8Array>) {
      onBytes();
      yield bytes;
    }
  };
  try {
    for await (const message of eventMessages(chunks())) onMessage(message);
  } catch (err) {
    await response.body.cancel().catch(() => {});
    throw err;
  }
}

/** A reasoning block as it streams: signed text, or redacted bytes (base64). */
interface ReasoningBlock {
  text: string;
  signature: string;
  redacted: string;
}

/** What the events of one answer add up to. */
interface BedrockAnswer {
  text: string;
  calls: ToolCall[];
  /** Tool input JSON being streamed, by content block index. */
  inputs: Map<number, { call: ToolCall; json: string }>;
  /** Reasoning blocks, by content block index, in the order they came. */
  reasoning: Map<number, ReasoningBlock>;
  stop: string | undefined;
  usage: TokenUsage;
}

function newAnswer(): BedrockAnswer {
  return {
    text: "",
    calls: [],
    inputs: new Map(),
    reasoning: new Map(),
    stop: undefined,
    usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
  };
}

/** The event members Herald reads (ConverseStream's JSON payloads). */
interface StreamEvent {
  contentBlockIndex?: number;
  start?: { toolUse?: { toolUseId?: string; name?: string } };
  delta?: {
    text?: string;
    toolUse?: { input?: string };
    reasoningContent?: { text?: string; signature?: string; redactedContent?: string };
  };
  stopReason?: string;
  usage?: {
    inputTokens?: number;
    outputTokens?: number;
    cacheReadInputTokens?: number;
    cacheWriteInputTokens?: number;
  };
}

/** Adds one frame: text to `onTextDelta` at once, reasoning, tool calls as their input completes, usage. */
function addEvent(answer: BedrockAnswer, message: EventMessage, request: TransportRequest): void {
  const kind = message.headers[":message-type"];
  if (kind === "exception" || kind === "error") throw frameError(message);
  const type = message.headers[":event-type"];
  const event = JSON.parse(message.body.toString("utf8")) as StreamEvent;
  const index = event.contentBlockIndex ?? 0;
  if (type === "contentBlockStart" && event.start?.toolUse) {
    const { toolUseId, name } = event.start.toolUse;
    const call: ToolCall = {
      id: toolUseId ?? "",
      type: "function",
      function: { name: name ?? "", arguments: "" },
    };
    answer.calls.push(call);
    answer.inputs.set(index, { call, json: "" });
  } else if (type === "contentBlockDelta" && event.delta) {
    const { delta } = event;
    if (delta.text) {
      answer.text += delta.text;
      request.onTextDelta?.(delta.text);
    } else if (delta.toolUse?.input !== undefined) {
      const pending = answer.inputs.get(index);
      if (pending) pending.json += delta.toolUse.input;
    } else if (delta.reasoningContent) {
      let block = answer.reasoning.get(index);
      if (!block) {
        block = { text: "", signature: "", redacted: "" };
        answer.reasoning.set(index, block);
      }
      block.text += delta.reasoningContent.text ?? "";
      block.signature += delta.reasoningContent.signature ?? "";
      block.redacted += delta.reasoningContent.redactedContent ?? "";
    }
  } else if (type === "contentBlockStop") {
    const pending = answer.inputs.get(index);
    if (pending) pending.call.function.arguments = pending.json || "{}";
  } else if (type === "messageStop") {
    answer.stop = event.stopReason;
  } else if (type === "metadata" && event.usage) {
    const u = event.usage;
    const read = u.cacheReadInputTokens ?? 0;
    const write = u.cacheWriteInputTokens ?? 0;
    answer.usage.promptTokens = (u.inputTokens ?? 0) + read + write;
    answer.usage.completionTokens = u.outputTokens ?? 0;
    answer.usage.cachedTokens = read;
    answer.usage.cacheWriteTokens = write;
  }
}

const REFUSALS = new Set(["guardrail_intervened", "content_filtered"]);

function finishAnswer(answer: BedrockAnswer, target: ResolvedModel): TransportAnswer {
  const { text, calls, stop } = answer;
  for (const c of calls) c.function.arguments ||= "{}";
  if (stop && REFUSALS.has(stop) && calls.length === 0) throw refusal(stop);
  if (!text && calls.length === 0 && !stop) throw endedEarly();
  // Converse's own shape of a reasoning block, as it goes back in the next request.
  const items = [...answer.reasoning.values()].map((b) =>
    b.redacted
      ? { redactedContent: b.redacted }
      : { reasoningText: { text: b.text, signature: b.signature } },
  );
  return {
    message: {
      role: "assistant",
      content: text || (calls.length > 0 ? null : ""),
      ...(calls.length > 0 ? { tool_calls: calls } : {}),
      ...(items.length > 0 ? { reasoning: { api: "bedrock", provider: target.provider.name, items } } : {}),
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
  /^(?:AccessDenied|UnrecognizedClient|InvalidSignature|ExpiredToken|IncompleteSignature|MissingAuthenticationToken|InvalidClientTokenId|SignatureDoesNotMatch)/;

/**
 * Classifies what the transport threw: Bedrock's errors are named after AWS's error type, with the
 * HTTP status (0 for an exception inside the stream); no credentials in the chain is an auth failure.
 */
export function classifyBedrockFailure(err: unknown): AttemptFailure {
  if ((err as Error | undefined)?.name === "CredentialsProviderError") {
    const detail = `no AWS credentials found (${(err as Error).message}): set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or run where an instance role applies`;
    return { category: "auth", kind: "status", retry: false, detail, cause: err };
  }
  if (!(err instanceof BedrockServiceError)) return unknownFailure(err);
  const name = err.name;
  const detail = err.message || name;
  const headers = new Headers();
  if (err.retryAfter) headers.set("retry-after", err.retryAfter);
  // Inside the stream an exception has no status of its own: its name gives it.
  let status = err.status || 500;
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
