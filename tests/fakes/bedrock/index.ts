/**
 * A fake Amazon Bedrock Runtime API on 127.0.0.1, speaking HTTP/2 (as the AWS SDK's client does) and
 * HTTP/1.1 (as Herald's transport does) on one port: `POST /model/{modelId}/converse-stream` answers in
 * `application/vnd.amazon.eventstream` binary frames (encoded with @smithy/eventstream-codec, as AWS
 * frames them: `:message-type`, `:event-type`, `:content-type` headers, CRC-checked), `POST
 * /model/{modelId}/converse` in JSON. It requires a SigV4 `Authorization` header with the expected
 * access key id (else 403 UnrecognizedClientException), refuses a toolResult without its toolUse
 * (ValidationException), and answers scripted errors with AWS's JSON body and `x-amzn-errortype`.
 *
 * Extended thinking as Claude on Bedrock takes it: `additionalModelRequestFields.thinking`
 * (`{type: "enabled", budget_tokens ≥ 1024}`, `inferenceConfig.maxTokens` above the budget); a step's
 * `reasoning` streams as `reasoningContent` deltas (text, then a signature the fake issued) before the
 * text. With thinking on, the assistant turn before a toolResult must start with its reasoningContent
 * block, signature unchanged, as the API requires (else ValidationException).
 */
import { createServer as createHttp1Server } from "node:http";
import {
  createServer,
  type Http2Session,
  type Http2ServerRequest as IncomingMessage,
  type Http2ServerResponse as ServerResponse,
} from "node:http2";
import { type AddressInfo, createServer as createNetServer, type Socket } from "node:net";
import { EventStreamCodec } from "@smithy/eventstream-codec";
import type { FakeBedrock, FakeBedrockHandler, FakeBedrockRequest, FakeBedrockStep } from "./types.js";

export type * from "./types.js";

const fromUtf8 = (text: string) => new TextEncoder().encode(text);
const codec = new EventStreamCodec((bytes) => new TextDecoder().decode(bytes), fromUtf8);

/** The text of the last user message's text blocks. */
export function lastUserText(request: FakeBedrockRequest): string {
  const last = [...request.messages]
    .reverse()
    .find((m) => m.role === "user" && m.content.some((b) => b.text));
  return last?.content.map((b) => b.text ?? "").join("") ?? "";
}

const TYPES: Record<number, string> = {
  400: "ValidationException",
  401: "UnrecognizedClientException",
  403: "AccessDeniedException",
  404: "ResourceNotFoundException",
  429: "ThrottlingException",
  500: "InternalServerException",
  503: "ServiceUnavailableException",
};

function sendError(res: ServerResponse, status: number, type: string, message: string, retryAfter?: number) {
  const data = JSON.stringify({ message });
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(data),
    "x-amzn-errortype": `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
    "x-amzn-requestid": "fake-request-id",
    ...(retryAfter !== undefined ? { "retry-after": String(retryAfter) } : {}),
  });
  res.end(data);
}

/** One event frame of ConverseStream. */
export function eventFrame(type: string, body: object): Uint8Array {
  return codec.encode({
    headers: {
      ":message-type": { type: "string", value: "event" },
      ":event-type": { type: "string", value: type },
      ":content-type": { type: "string", value: "application/json" },
    },
    body: fromUtf8(JSON.stringify(body)),
  });
}

/** An exception frame of ConverseStream (`type` as the stream names it: `throttlingException`). */
export function exceptionFrame(type: string, message: string): Uint8Array {
  return codec.encode({
    headers: {
      ":message-type": { type: "string", value: "exception" },
      ":exception-type": { type: "string", value: type },
      ":content-type": { type: "string", value: "application/json" },
    },
    body: fromUtf8(JSON.stringify({ message })),
  });
}

/** The signature the fake gives the reasoning of answer `counter`. */
const signatureOf = (counter: number) => `fake-signature-${counter}`;

function invalidThinking(body: FakeBedrockRequest, issued: Map<string, string>): string | undefined {
  const thinking = body.additionalModelRequestFields?.thinking;
  if (!thinking) return undefined;
  if (thinking.type !== "enabled" || !Number.isInteger(thinking.budget_tokens))
    return "thinking: type must be 'enabled' with an integer budget_tokens";
  if (thinking.budget_tokens < 1024) return "thinking.budget_tokens: must be at least 1024";
  if (!((body.inferenceConfig?.maxTokens ?? 0) > thinking.budget_tokens))
    return "max_tokens must be greater than thinking.budget_tokens";
  for (const m of body.messages) {
    for (const b of m.content) {
      const r = b.reasoningContent?.reasoningText;
      if (r && issued.get(r.signature) !== r.text) return "Invalid `signature` in `thinking` block";
    }
  }
  const last = body.messages.at(-1);
  if (last?.content.some((b) => b.toolResult)) {
    const before = body.messages.at(-2);
    if (!before?.content[0]?.reasoningContent)
      return "Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block.";
  }
  return undefined;
}

function invalidReason(body: FakeBedrockRequest): string | undefined {
  if (!Array.isArray(body.messages) || body.messages.length === 0) return "messages: must not be empty";
  if (body.messages[0]?.role !== "user") return "A conversation must start with a user message.";
  for (const [i, m] of body.messages.entries()) {
    if (body.messages[i - 1]?.role === m.role)
      return "A conversation must alternate between user and assistant roles.";
    for (const b of m.content)
      if (b.text === "") return "The text field in the ContentBlock object is blank.";
    const results = m.content.filter((b) => b.toolResult).map((b) => b.toolResult!.toolUseId);
    const uses = (body.messages[i - 1]?.content ?? [])
      .filter((b) => b.toolUse)
      .map((b) => b.toolUse!.toolUseId);
    if (results.some((id) => !uses.includes(id)))
      return "The number of toolResult blocks at messages.1.content exceeds the number of toolUse blocks of previous turn.";
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

/** The events of one answer, in ConverseStream's order. */
function events(step: FakeBedrockStep, prompt: number, counter: number): [string, object][] {
  const out: [string, object][] = [["messageStart", { role: "assistant" }]];
  let index = 0;
  let produced = 0;
  if (step.reasoning) {
    for (const text of split(step.reasoning, 2))
      out.push(["contentBlockDelta", { contentBlockIndex: index, delta: { reasoningContent: { text } } }]);
    out.push([
      "contentBlockDelta",
      { contentBlockIndex: index, delta: { reasoningContent: { signature: signatureOf(counter) } } },
    ]);
    out.push(["contentBlockStop", { contentBlockIndex: index++ }]);
    produced += step.reasoning.length;
  }
  for (const piece of split(step.text ?? "", step.pieces ?? 3)) {
    out.push(["contentBlockDelta", { contentBlockIndex: index, delta: { text: piece } }]);
    produced += piece.length;
  }
  if (step.text) out.push(["contentBlockStop", { contentBlockIndex: index++ }]);
  for (const [n, call] of (step.toolCalls ?? []).entries()) {
    const toolUseId = `tooluse_fake${counter}_${n}`;
    out.push([
      "contentBlockStart",
      { contentBlockIndex: index, start: { toolUse: { toolUseId, name: call.name } } },
    ]);
    const json = JSON.stringify(call.arguments);
    const half = Math.ceil(json.length / 2);
    for (const input of [json.slice(0, half), json.slice(half)])
      out.push(["contentBlockDelta", { contentBlockIndex: index, delta: { toolUse: { input } } }]);
    out.push(["contentBlockStop", { contentBlockIndex: index++ }]);
    produced += json.length;
  }
  const stopReason = step.guardrail
    ? "guardrail_intervened"
    : step.toolCalls?.length
      ? "tool_use"
      : "end_turn";
  out.push(["messageStop", { stopReason }]);
  const outputTokens = Math.max(1, Math.ceil(produced / 4));
  const usage = {
    inputTokens: prompt,
    outputTokens,
    totalTokens: prompt + outputTokens + (step.cacheRead ?? 0) + (step.cacheWrite ?? 0),
    ...(step.cacheRead ? { cacheReadInputTokens: step.cacheRead } : {}),
    ...(step.cacheWrite ? { cacheWriteInputTokens: step.cacheWrite } : {}),
  };
  out.push(["metadata", { usage, metrics: { latencyMs: 5 } }]);
  return out;
}

/** Starts the fake: requests must be signed with `accessKeyId`; `keep: false` records nothing. */
export async function startFakeBedrock(
  options: { accessKeyId?: string; keep?: boolean } = {},
): Promise<FakeBedrock> {
  const accessKeyId = options.accessKeyId ?? "AKIDFAKE";
  const keep = options.keep ?? true;
  const requests: FakeBedrockRequest[] = [];
  /** Signature → the reasoning text it signed. */
  const issued = new Map<string, string>();
  const queue: (FakeBedrockStep | FakeBedrockHandler)[] = [];
  let defaultHandler: FakeBedrockHandler = (r) => ({ text: `echo: ${lastUserText(r)}` });
  let counter = 0;

  const answer = (
    req: IncomingMessage,
    res: ServerResponse,
    modelId: string,
    stream: boolean,
    raw: string,
  ) => {
    const authorization = String(req.headers.authorization ?? "");
    if (!authorization.startsWith(`AWS4-HMAC-SHA256 Credential=${accessKeyId}/`)) {
      sendError(
        res,
        403,
        "UnrecognizedClientException",
        "The security token included in the request is invalid.",
      );
      return;
    }
    const body = { ...(JSON.parse(raw || "{}") as FakeBedrockRequest), modelId, authorization };
    if (keep) requests.push(body);
    const invalid = invalidReason(body) ?? invalidThinking(body, issued);
    if (invalid) {
      sendError(res, 400, "ValidationException", invalid);
      return;
    }
    const next = queue.shift();
    const step = next === undefined ? defaultHandler(body) : typeof next === "function" ? next(body) : next;
    if (step.error) {
      const { status, type, message, retryAfterSeconds } = step.error;
      sendError(
        res,
        status,
        type ?? TYPES[status] ?? "InternalServerException",
        message ?? `fake error ${status}`,
        retryAfterSeconds,
      );
      return;
    }
    const list = events(step, Math.max(1, Math.ceil(raw.length / 4)), ++counter);
    if (step.reasoning) issued.set(signatureOf(counter), step.reasoning);
    if (!stream) {
      const message = { role: "assistant", content: [] as object[] };
      if (step.text) message.content.push({ text: step.text });
      for (const [type, e] of list) {
        const start = (e as { start?: { toolUse?: { toolUseId: string; name: string } } }).start;
        if (type === "contentBlockStart" && start?.toolUse)
          message.content.push({ toolUse: { ...start.toolUse, input: {} } });
      }
      const stop = list.find(([t]) => t === "messageStop")![1];
      const meta = list.at(-1)![1];
      const data = JSON.stringify({ output: { message }, ...stop, ...meta });
      res.writeHead(200, { "content-type": "application/json" });
      res.end(data);
      return;
    }
    res.writeHead(200, {
      "content-type": "application/vnd.amazon.eventstream",
      "x-amzn-requestid": `fake-${counter}`,
    });
    if (step.streamException) {
      // The text streams, then the exception frame ends the stream (as the service fails mid-answer).
      for (const [type, e] of list.filter(([t]) => t === "messageStart" || t === "contentBlockDelta"))
        res.write(eventFrame(type, e));
      res.end(exceptionFrame(step.streamException.type, step.streamException.message));
      return;
    }
    for (const [type, e] of list) res.write(eventFrame(type, e));
    res.end();
  };

  // HTTP/2 in clear text, as the SDK's Node handler speaks it, and HTTP/1.1, as the transport does
  // (TLS aside, the real service's protocols): the first bytes of a connection choose.
  const sessions = new Set<Http2Session>();
  const sockets = new Set<Socket>();
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const match = /^\/model\/([^/]+)\/(converse-stream|converse)$/.exec(url.pathname);
    const parts: Buffer[] = [];
    req.on("data", (p: Buffer) => parts.push(p));
    req.on("end", () => {
      if (req.method !== "POST" || !match) {
        sendError(res, 404, "UnknownOperationException", `no such operation: ${url.pathname}`);
        return;
      }
      answer(
        req,
        res,
        decodeURIComponent(match[1]!),
        match[2] === "converse-stream",
        Buffer.concat(parts).toString("utf8"),
      );
    });
  };
  const h2 = createServer(onRequest);
  // The HTTP/1.1 request and response carry what the handler reads and writes of HTTP/2's.
  const h1 = createHttp1Server(onRequest as never);
  h2.on("session", (session: Http2Session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.once("readable", () => {
      const head = socket.read() as Buffer | null;
      if (!head) return;
      socket.unshift(head);
      (head.subarray(0, 3).toString() === "PRI" ? h2 : h1).emit("connection", socket);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    script: (...steps) => void queue.push(...steps),
    setDefault: (handler) => {
      defaultHandler = handler;
    },
    close: async () => {
      for (const session of sessions) session.destroy();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
