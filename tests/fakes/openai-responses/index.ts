/**
 * A fake OpenAI Responses API on 127.0.0.1: `POST /v1/responses`, streamed (response.created,
 * output_item.added/done, content_part, output_text.delta, function_call_arguments.delta,
 * response.completed, response.failed) and not. It checks the bearer key, refuses what the real API
 * refuses (wire.ts) with OpenAI's error body, answers scripted errors with `retry-after`, returns
 * encrypted reasoning items when the request includes `reasoning.encrypted_content`, and reports usage
 * with cached tokens (the prefix shared with the previous request, in 64-token blocks) and reasoning
 * tokens.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type {
  FakeResponses,
  FakeResponsesHandler,
  FakeResponsesRequest,
  FakeResponsesStep,
  FakeResponsesUsage,
} from "./types.js";
import { answerEvents, invalidReason, outputItems, responseObject } from "./wire.js";

export type * from "./types.js";
export { encryptReasoning } from "./wire.js";

/** The text of the last user input item. */
export function lastUserInput(request: FakeResponsesRequest): string {
  if (typeof request.input === "string") return request.input;
  const last = [...request.input].reverse().find((i) => i.role === "user");
  if (!last) return "";
  if (typeof last.content === "string") return last.content;
  return (last.content ?? []).map((p) => p.text ?? "").join("");
}

function sendJson(res: ServerResponse, status: number, body: object, headers: Record<string, string> = {}) {
  const data = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(data),
    ...headers,
  });
  res.end(data);
}

function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  code: string | null,
  headers?: Record<string, string>,
) {
  const type =
    status === 429 ? "rate_limit_exceeded" : status >= 500 ? "server_error" : "invalid_request_error";
  sendJson(res, status, { error: { message, type, param: null, code } }, headers);
}

function commonPrefix(a: string, b: string): number {
  const max = Math.min(a.length, b.length);
  let i = 0;
  while (i < max && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** Starts the fake; requests must carry `Authorization: Bearer <apiKey>`; `keep: false` records nothing. */
export async function startFakeResponses(
  options: { apiKey?: string; keep?: boolean } = {},
): Promise<FakeResponses> {
  // The benchmark keeps nothing: its kept bodies would make the fake's GC part of what is measured.
  const keep = options.keep ?? true;
  const apiKey = options.apiKey ?? "test-key";
  const requests: FakeResponsesRequest[] = [];
  const bodies: string[] = [];
  const usages: FakeResponsesUsage[] = [];
  const rejected: string[] = [];
  const queue: (FakeResponsesStep | FakeResponsesHandler)[] = [];
  const reasoningOf = new Map<string, string>();
  let defaultHandler: FakeResponsesHandler = (r) => ({ text: `echo: ${lastUserInput(r)}` });
  let counter = 0;
  let lastBody = "";

  const answer = (res: ServerResponse, raw: string) => {
    const body = JSON.parse(raw) as FakeResponsesRequest;
    if (keep) {
      requests.push(body);
      bodies.push(raw);
    }
    const invalid = invalidReason(body, reasoningOf);
    if (invalid) {
      rejected.push(invalid);
      sendError(res, 400, invalid, null);
      return;
    }
    const next = queue.shift();
    const step = next === undefined ? defaultHandler(body) : typeof next === "function" ? next(body) : next;
    if (step.error) {
      const { status, message, code, retryAfterSeconds } = step.error;
      const headers: Record<string, string> =
        retryAfterSeconds === undefined ? {} : { "retry-after": String(retryAfterSeconds) };
      sendError(res, status, message ?? `fake error ${status}`, code ?? null, headers);
      return;
    }
    const n = ++counter;
    const encrypted = body.include?.includes("reasoning.encrypted_content") ?? false;
    const items = outputItems(
      step,
      Boolean(body.reasoning) && encrypted,
      () => `${n}_${Math.random().toString(36).slice(2, 8)}`,
    );
    const reasoning = items.find((i) => i.type === "reasoning");
    for (const call of items.filter((i) => i.type === "function_call")) {
      if (reasoning) reasoningOf.set(String(call.id), String(reasoning.encrypted_content));
    }
    const reasoningChars = step.reasoning && body.reasoning ? step.reasoning.length : 0;
    const outChars = JSON.stringify(items).length;
    const input = Math.ceil(raw.length / 4);
    const cached = Math.min(input, Math.floor(commonPrefix(raw, lastBody) / 256) * 64);
    lastBody = raw;
    const usage: FakeResponsesUsage = {
      input_tokens: input,
      input_tokens_details: { cached_tokens: cached },
      output_tokens: Math.ceil(outChars / 4),
      output_tokens_details: { reasoning_tokens: Math.ceil(reasoningChars / 4) },
      total_tokens: input + Math.ceil(outChars / 4),
    };
    if (keep) usages.push(usage);
    const id = `resp_fake_${n}`;
    if (!body.stream) {
      sendJson(res, 200, responseObject(id, body.model, "completed", items, usage));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.end(answerEvents(id, body.model, items, usage, step).join(""));
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "").split("?")[0];
    const parts: Buffer[] = [];
    req.on("data", (p: Buffer) => parts.push(p));
    req.on("end", () => {
      if (req.headers.authorization !== `Bearer ${apiKey}`) {
        sendError(res, 401, "Incorrect API key provided.", "invalid_api_key");
        return;
      }
      if (req.method !== "POST" || path !== "/v1/responses") {
        sendError(res, 404, `Invalid URL (${req.method} ${path})`, null);
        return;
      }
      answer(res, Buffer.concat(parts).toString("utf8"));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    bodies,
    usages,
    rejected,
    script: (...steps) => void queue.push(...steps),
    setDefault: (handler) => {
      defaultHandler = handler;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
