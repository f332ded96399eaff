/**
 * A scripted OpenAI-compatible model server on 127.0.0.1 (node:http, random free port). Serves
 * `POST /v1/chat/completions` (streaming and not) and `GET /v1/models`; answers at once unless a step
 * asks for a delay. Tests queue steps with `script()`; when the queue has nothing for a request, the
 * default handler answers (echo of the last user message).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  commonPrefix,
  completion,
  errorBody,
  messageText,
  resolveToolCalls,
  streamChunks,
  type Usage,
  usageOf,
} from "./chunks.js";
import type { FakeLlm, FakeLlmHandler, FakeLlmOptions, FakeLlmRequest, FakeLlmStep } from "./types.js";

export { messageText } from "./chunks.js";
export type * from "./types.js";

/** The default answer: `echo: <last user message text>`. */
export const echoHandler: FakeLlmHandler = (request) => {
  const lastUser = [...request.messages].reverse().find((m) => m.role === "user");
  return { text: `echo: ${messageText(lastUser)}` };
};

/** Resolves after `ms`, or early (false) when `signal` fires. */
function wait(ms: number, signal: AbortSignal): Promise<boolean> {
  if (ms <= 0) return Promise.resolve(!signal.aborted);
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString("utf8");
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: object,
  headers: Record<string, string> = {},
): void {
  const data = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(data),
    ...headers,
  });
  res.end(data);
}

/**
 * Starts a fake model server. Close it with `close()` (drops keep-alive connections too).
 * @param options.apiKey when set, requests without `Bearer <apiKey>` get 401.
 */
export async function startFakeLlm(options: FakeLlmOptions = {}): Promise<FakeLlm> {
  const models = options.models ?? ["fake-model"];
  const keepRequests = options.keepRequests ?? true;
  const requests: FakeLlmRequest[] = [];
  const bodies: string[] = [];
  const headers: Record<string, string | string[] | undefined>[] = [];
  const usages: Usage[] = [];
  let lastBody = "";
  let received = 0;
  const closedEarly: FakeLlmRequest[] = [];
  const queue: (FakeLlmStep | FakeLlmHandler)[] = [];
  const waiters = new Set<() => void>();
  let defaultHandler: FakeLlmHandler = echoHandler;
  let counter = 0;
  const shutdown = new AbortController();

  const notify = () => {
    for (const w of [...waiters]) w();
  };
  const waitUntil = (done: () => boolean) =>
    new Promise<void>((resolve) => {
      if (done()) return resolve();
      const check = () => {
        if (!done()) return;
        waiters.delete(check);
        resolve();
      };
      waiters.add(check);
    });

  /** Takes the first queued step that matches the request's model; function steps match any model. */
  const takeStep = (request: FakeLlmRequest): FakeLlmStep => {
    const index = queue.findIndex((s) => typeof s === "function" || !s.model || s.model === request.model);
    if (index < 0) return defaultHandler(request);
    const [step] = queue.splice(index, 1);
    return typeof step === "function" ? step(request) : step!;
  };

  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const request = JSON.parse(body || "{}") as FakeLlmRequest;
    received++;
    if (keepRequests) {
      requests.push(request);
      bodies.push(body);
      headers.push({ ...req.headers });
    }
    const step = takeStep(request);
    notify();

    // Ends waits early when the client goes away (abort) or the fake shuts down.
    const gone = new AbortController();
    const onShutdown = () => gone.abort();
    shutdown.signal.addEventListener("abort", onShutdown, { once: true });
    res.on("close", () => {
      shutdown.signal.removeEventListener("abort", onShutdown);
      if (res.writableFinished) return;
      closedEarly.push(request);
      notify();
      gone.abort();
    });

    if (!(await wait(step.delayMs ?? 0, gone.signal))) return;
    if (step.disconnect) {
      req.socket.destroy();
      return;
    }
    if (step.error) {
      const { status, message, retryAfterSeconds } = step.error;
      const headers: Record<string, string> = {};
      if (retryAfterSeconds !== undefined) {
        headers["retry-after"] = String(Math.ceil(retryAfterSeconds));
        headers["retry-after-ms"] = String(Math.round(retryAfterSeconds * 1000));
      }
      sendJson(res, status, errorBody(status, message ?? `fake error ${status}`), headers);
      return;
    }

    if (step.sse) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      res.socket?.setNoDelay(true);
      for (const [i, piece] of step.sse.entries()) {
        if (i > 0 && !(await wait(step.chunkDelayMs ?? 5, gone.signal))) return;
        res.write(piece);
      }
      res.end();
      return;
    }

    const id = `chatcmpl-${++counter}`;
    const model = request.model;
    const text = step.text ?? "";
    const calls = resolveToolCalls(
      step.toolCalls ?? [],
      () => `call_${counter}_${Math.random().toString(36).slice(2, 8)}`,
    );
    const usage = usageOf(body.length, text, calls, commonPrefix(body, lastBody));
    lastBody = body;
    if (keepRequests) usages.push(usage);

    if (!request.stream) {
      sendJson(res, 200, completion(id, model, text, calls, usage));
      return;
    }
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    const chunks = streamChunks(
      id,
      model,
      text,
      calls,
      request.stream_options?.include_usage ? usage : undefined,
      step.pieces,
    );
    const events = chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`);
    if (!step.chunkDelayMs) {
      // No pauses asked for: the whole stream in one write (still one SSE event per chunk).
      res.end(`${events.join("")}data: [DONE]\n\n`);
      return;
    }
    for (const [i, event] of events.entries()) {
      // The role chunk and the first content piece go out together, so a client sees text at once.
      if (i > 1 && !(await wait(step.chunkDelayMs, gone.signal))) return;
      if (gone.signal.aborted) return;
      res.write(event);
    }
    res.end("data: [DONE]\n\n");
  }

  const server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (options.apiKey && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      sendJson(res, 401, errorBody(401, "Incorrect API key provided."));
      return;
    }
    if (req.method === "GET" && path === "/v1/models") {
      sendJson(res, 200, {
        object: "list",
        data: models.map((m) => ({ id: m, object: "model", created: 0, owned_by: "fake" })),
      });
      return;
    }
    if (req.method === "POST" && path === "/v1/chat/completions") {
      answer(req, res).catch((err: unknown) => {
        if (!res.headersSent) sendJson(res, 500, errorBody(500, `fake llm failed: ${String(err)}`));
        else res.destroy();
      });
      return;
    }
    sendJson(res, 404, errorBody(404, `no route ${req.method} ${path}`));
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
    headers,
    usages,
    closedEarly,
    script: (...steps) => {
      queue.push(...steps);
    },
    setDefault: (handler) => {
      defaultHandler = handler;
    },
    pending: () => queue.length,
    received: () => received,
    waitForRequests: (count) => waitUntil(() => received >= count),
    waitForClosedEarly: (count) => waitUntil(() => closedEarly.length >= count),
    close: async () => {
      shutdown.abort();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
