/**
 * A fake Anthropic Messages API on 127.0.0.1 (node:http, random free port): `POST /v1/messages`,
 * streamed (the real event names: message_start, content_block_start/delta/stop with text, thinking,
 * signature and tool-input deltas, message_delta, message_stop, ping, error) and not. It checks the
 * key (`x-api-key` or a bearer token), refuses bodies the real API refuses (wire.ts: a document block
 * that is not a base64 PDF among them) with its error body, answers scripted
 * errors with `retry-after`, keeps a prompt cache by breakpoints and reports cache reads and writes.
 * `GET /v1/models` lists `options.models` (the setup's live check).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type {
  FakeAnthropic,
  FakeAnthropicBlock,
  FakeAnthropicHandler,
  FakeAnthropicRequest,
  FakeAnthropicStep,
  FakeAnthropicUsage,
} from "./types.js";
import { answerBlocks, answerEvents, invalidReason, PromptCache } from "./wire.js";

export type * from "./types.js";
export { signThinking } from "./wire.js";

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};

/** The text of the last user turn (its text blocks). */
export function lastUserText(request: FakeAnthropicRequest): string {
  const last = [...request.messages].reverse().find((m) => m.role === "user");
  if (!last) return "";
  if (typeof last.content === "string") return last.content;
  return last.content.map((b) => (b.type === "text" ? (b.text ?? "") : "")).join("");
}

function sendJson(res: ServerResponse, status: number, body: object, headers: Record<string, string> = {}) {
  const data = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(data),
    "request-id": `req_fake_${Date.now().toString(36)}`,
    ...headers,
  });
  res.end(data);
}

function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  type?: string,
  headers?: Record<string, string>,
) {
  sendJson(
    res,
    status,
    { type: "error", error: { type: type ?? ERROR_TYPES[status] ?? "api_error", message } },
    headers,
  );
}

/** Starts the fake: `apiKey` is the key requests must carry; `keep: false` records nothing (the benchmark). */
export async function startFakeAnthropic(
  options: { apiKey?: string; keep?: boolean; models?: string[] } = {},
): Promise<FakeAnthropic> {
  const models = options.models ?? ["claude-haiku-4-5", "claude-sonnet-4-5"];
  // The benchmark keeps nothing: its kept bodies would make the fake's GC part of what is measured.
  const keep = options.keep ?? true;
  const apiKey = options.apiKey ?? "test-anthropic-key";
  const requests: FakeAnthropicRequest[] = [];
  const bodies: string[] = [];
  const headers: Record<string, string | string[] | undefined>[] = [];
  const usages: FakeAnthropicUsage[] = [];
  const rejected: string[] = [];
  const queue: (FakeAnthropicStep | FakeAnthropicHandler)[] = [];
  const cache = new PromptCache();
  let defaultHandler: FakeAnthropicHandler = (r) => ({ text: `echo: ${lastUserText(r)}` });
  let counter = 0;

  const answer = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    let body: FakeAnthropicRequest;
    try {
      body = JSON.parse(raw) as FakeAnthropicRequest;
    } catch {
      sendError(res, 400, "The request body is not valid JSON.");
      return;
    }
    if (keep) {
      requests.push(body);
      bodies.push(raw);
      headers.push({ ...req.headers });
    }
    const invalid = invalidReason(body);
    if (invalid) {
      rejected.push(invalid);
      sendError(res, 400, invalid);
      return;
    }
    const next = queue.shift();
    const step = next === undefined ? defaultHandler(body) : typeof next === "function" ? next(body) : next;
    if (step.error) {
      const { status, type, message, retryAfterSeconds } = step.error;
      const extra: Record<string, string> =
        retryAfterSeconds === undefined ? {} : { "retry-after": String(retryAfterSeconds) };
      sendError(res, status, message ?? `fake error ${status}`, type, extra);
      return;
    }
    const id = `msg_fake_${++counter}`;
    const blocks = step.refusal
      ? []
      : answerBlocks(
          step,
          body.thinking?.type === "enabled",
          () => `toolu_fake_${counter}_${Math.random().toString(36).slice(2, 8)}`,
        );
    const stopReason = step.refusal ? "refusal" : step.toolCalls?.length ? "tool_use" : "end_turn";
    const outChars = blocks.reduce((n, b) => n + JSON.stringify(b).length, 0);
    const usage: FakeAnthropicUsage = {
      ...cache.use(body),
      output_tokens: Math.max(1, Math.ceil(outChars / 4)),
    };
    if (keep) usages.push(usage);
    if (!body.stream) {
      sendJson(res, 200, {
        id,
        type: "message",
        role: "assistant",
        model: body.model,
        content: blocks,
        stop_reason: stopReason,
        stop_sequence: null,
        usage,
      });
      return;
    }
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      "request-id": `req_${id}`,
    });
    res.end(answerEvents(id, body.model, blocks as FakeAnthropicBlock[], stopReason, usage, step).join(""));
  };

  const server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (req.method === "GET" && path === "/v1/models") {
      // The Models API: newest first, one page.
      const given = req.headers["x-api-key"] ?? req.headers.authorization?.replace(/^Bearer /, "");
      if (given !== apiKey) return sendError(res, 401, "invalid x-api-key");
      const data = models.map((id) => ({
        type: "model",
        id,
        display_name: id,
        created_at: "2026-01-01T00:00:00Z",
      }));
      sendJson(res, 200, {
        data,
        has_more: false,
        first_id: models[0] ?? null,
        last_id: models.at(-1) ?? null,
      });
      return;
    }
    if (req.method !== "POST" || path !== "/v1/messages") {
      sendError(res, 404, `Not found: ${req.method} ${path}`);
      return;
    }
    const parts: Buffer[] = [];
    req.on("data", (p: Buffer) => parts.push(p));
    req.on("end", () => {
      // The SDK sends the key as a bearer token (1.x); older clients send `x-api-key`.
      const given = req.headers["x-api-key"] ?? req.headers.authorization?.replace(/^Bearer /, "");
      if (given !== apiKey) {
        sendError(res, 401, "invalid x-api-key");
        return;
      }
      if (!req.headers["anthropic-version"]) {
        sendError(res, 400, "anthropic-version: header is required");
        return;
      }
      answer(req, res, Buffer.concat(parts).toString("utf8"));
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
    bodies,
    headers,
    usages,
    rejected,
    script: (...steps) => void queue.push(...steps),
    setDefault: (handler) => {
      defaultHandler = handler;
    },
    pending: () => queue.length,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
