/**
 * A fake Gemini API (Generative Language, v1beta) on 127.0.0.1: `POST /v1beta/models/{model}:
 * streamGenerateContent?alt=sse` and `:generateContent`. It checks `x-goog-api-key` (a wrong key is a 400
 * API_KEY_INVALID, as Google answers), refuses what the real API refuses (a function response without
 * its call, a function call of this turn sent back without its thought signature), answers scripted
 * errors in Google's error body (RetryInfo for 429), streams `data:` chunks of candidates with
 * `finishReason` and `usageMetadata` (cached and thought tokens), and signs function calls when the
 * request asks for thinking.
 *
 * Explicit caching: `POST /v1beta/cachedContents` stores a model's system instruction and tools (at
 * least 1,024 tokens, counted as characters / 4, else 400) with a TTL, `GET` and `DELETE
 * /v1beta/cachedContents/{id}` read and drop one. A request naming `cachedContent` must not repeat the
 * system instruction or tools (400), gets 404 for an entry that expired or never was, and reports its
 * tokens as `cachedContentTokenCount` (within `promptTokenCount`). Without it, a prompt prefix shared
 * with the previous request counts as implicitly cached.
 */
import { createHmac } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type {
  FakeGemini,
  FakeGeminiCache,
  FakeGeminiHandler,
  FakeGeminiPart,
  FakeGeminiRequest,
  FakeGeminiStep,
  FakeGeminiUsage,
} from "./types.js";

export type * from "./types.js";

/** The thought signature the fake gives a function call (opaque in the real API; checkable here). */
export function signCall(name: string, args: unknown): string {
  return createHmac("sha256", "fake-gemini")
    .update(name + JSON.stringify(args))
    .digest("base64");
}

/** The text of the last user content (its text parts). */
export function lastUserText(request: FakeGeminiRequest): string {
  const last = [...request.contents].reverse().find((c) => c.role === "user" && c.parts.some((p) => p.text));
  return last?.parts.map((p) => p.text ?? "").join("") ?? "";
}

const STATUS: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
};

function sendError(res: ServerResponse, code: number, message: string, details: object[] = []) {
  const data = JSON.stringify({ error: { code, message, status: STATUS[code] ?? "UNKNOWN", details } });
  res.writeHead(code, {
    "content-type": "application/json; charset=UTF-8",
    "content-length": Buffer.byteLength(data),
  });
  res.end(data);
}

/** Why the real API would refuse the body, or undefined. `signed`: signatures the fake gave. */
function invalidReason(body: FakeGeminiRequest, signed: Set<string>): string | undefined {
  if (!Array.isArray(body.contents) || body.contents.length === 0)
    return "* GenerateContentRequest.contents: contents is not specified";
  let lastUser = -1;
  body.contents.forEach((c, i) => {
    if (c.role === "user" && c.parts.some((p) => p.text !== undefined || p.inlineData)) lastUser = i;
  });
  for (const [i, c] of body.contents.entries()) {
    if (c.role !== "user" && c.role !== "model") return `Please use a valid role: user, model.`;
    for (const p of c.parts) {
      if (p.text === "") return `* GenerateContentRequest.contents[${i}].parts: text must not be empty`;
    }
    const responses = c.parts.filter((p) => p.functionResponse);
    if (responses.length) {
      const calls = body.contents[i - 1]?.parts.filter((p) => p.functionCall) ?? [];
      if (calls.length !== responses.length) {
        return "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.";
      }
    }
    // The calls of the current turn (after the last user message) must carry their signatures back.
    if (c.role === "model" && i > lastUser) {
      for (const p of c.parts) {
        if (!p.functionCall) continue;
        const expected = signCall(p.functionCall.name, p.functionCall.args ?? {});
        if (signed.has(expected) && p.thoughtSignature !== expected) {
          return `Function call \`${p.functionCall.name}\` in the ${i}. content block is missing a \`thought_signature\`.`;
        }
      }
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

function commonPrefix(a: string, b: string): number {
  const max = Math.min(a.length, b.length);
  let i = 0;
  while (i < max && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** Starts the fake: `apiKey` is the key requests must carry; `keep: false` records nothing. */
export async function startFakeGemini(
  options: { apiKey?: string; keep?: boolean; models?: string[] } = {},
): Promise<FakeGemini> {
  const models = options.models ?? ["gemini-2.5-flash", "gemini-2.5-pro"];
  const apiKey = options.apiKey ?? "test-gemini-key";
  const keep = options.keep ?? true;
  const requests: FakeGeminiRequest[] = [];
  const bodies: string[] = [];
  const usages: FakeGeminiUsage[] = [];
  const rejected: string[] = [];
  const queue: (FakeGeminiStep | FakeGeminiHandler)[] = [];
  const signed = new Set<string>();
  let defaultHandler: FakeGeminiHandler = (r) => ({ text: `echo: ${lastUserText(r)}` });
  let lastBody = "";
  let counter = 0;
  const caches = new Map<string, FakeGeminiCache>();
  let cacheCounter = 0;
  const cacheView = (c: FakeGeminiCache) => ({
    name: c.name,
    model: c.model,
    expireTime: new Date(c.expiresAt).toISOString(),
    usageMetadata: { totalTokenCount: c.tokens },
  });

  /** cachedContents.create: the entry, or why the real API would refuse it. */
  const createCache = (res: ServerResponse, raw: string) => {
    const body = JSON.parse(raw || "{}") as {
      model?: string;
      ttl?: string;
      systemInstruction?: unknown;
      tools?: unknown;
    };
    if (!body.model?.startsWith("models/")) {
      sendError(res, 400, "* CreateCachedContentRequest.cached_content.model: model is not specified");
      return;
    }
    const tokens = Math.ceil(JSON.stringify([body.systemInstruction ?? null, body.tools ?? null]).length / 4);
    if (tokens < 1024) {
      sendError(
        res,
        400,
        `Cached content is too small. total_token_count=${tokens}, min_total_token_count=1024`,
      );
      return;
    }
    const seconds = /^(\d+(?:\.\d+)?)s$/.exec(body.ttl ?? "3600s")?.[1];
    const entry: FakeGeminiCache = {
      name: `cachedContents/fake${++cacheCounter}`,
      model: body.model,
      tokens,
      expiresAt: Date.now() + Number(seconds ?? 3600) * 1000,
      body: raw,
    };
    caches.set(entry.name, entry);
    res.writeHead(200, { "content-type": "application/json; charset=UTF-8" });
    res.end(JSON.stringify(cacheView(entry)));
  };

  const answer = (res: ServerResponse, model: string, stream: boolean, raw: string) => {
    const body = { ...(JSON.parse(raw) as FakeGeminiRequest), model };
    if (keep) {
      requests.push(body);
      bodies.push(raw);
    }
    let cache: FakeGeminiCache | undefined;
    if (body.cachedContent) {
      cache = caches.get(body.cachedContent);
      if (!cache || cache.expiresAt <= Date.now()) {
        sendError(res, 404, "CachedContent not found (or permission denied)");
        return;
      }
      if (cache.model !== `models/${model}`) {
        sendError(res, 400, "Model used by GenerateContent request and CachedContent has to be the same.");
        return;
      }
      if (body.systemInstruction || body.tools || (body as Record<string, unknown>)["toolConfig"]) {
        sendError(
          res,
          400,
          "CachedContent can not be used with GenerateContent request setting system_instruction, tools or tool_config.",
        );
        return;
      }
    }
    const invalid = invalidReason(body, signed);
    if (invalid) {
      rejected.push(invalid);
      sendError(res, 400, invalid);
      return;
    }
    const next = queue.shift();
    const step = next === undefined ? defaultHandler(body) : typeof next === "function" ? next(body) : next;
    if (step.error) {
      const { status, message, retryDelaySeconds, reason } = step.error;
      const details: object[] = [];
      if (retryDelaySeconds !== undefined) {
        details.push({
          "@type": "type.googleapis.com/google.rpc.RetryInfo",
          retryDelay: `${retryDelaySeconds}s`,
        });
      }
      if (reason)
        details.push({
          "@type": "type.googleapis.com/google.rpc.ErrorInfo",
          reason,
          domain: "googleapis.com",
        });
      sendError(res, status, message ?? `fake error ${status}`, details);
      return;
    }
    const thinking =
      body.generationConfig?.thinkingConfig?.thinkingBudget !== undefined &&
      body.generationConfig.thinkingConfig.thinkingBudget !== 0;
    const parts: FakeGeminiPart[] = [];
    if (thinking && step.thought && body.generationConfig?.thinkingConfig?.includeThoughts)
      parts.push({ text: step.thought, thought: true });
    if (step.text) parts.push(...split(step.text, step.pieces ?? 3).map((text) => ({ text })));
    for (const call of step.toolCalls ?? []) {
      const part: FakeGeminiPart = { functionCall: { name: call.name, args: call.arguments } };
      if (thinking) {
        part.thoughtSignature = signCall(call.name, call.arguments);
        signed.add(part.thoughtSignature);
      }
      parts.push(part);
    }
    const prompt = Math.ceil(raw.length / 4) + (cache?.tokens ?? 0);
    const cached = cache
      ? cache.tokens
      : Math.min(prompt, Math.floor(commonPrefix(raw, lastBody) / 4096) * 1024);
    lastBody = raw;
    const thoughts = thinking && step.thought ? Math.ceil(step.thought.length / 4) : 0;
    const out = Math.ceil(JSON.stringify(parts).length / 4);
    const usage: FakeGeminiUsage = {
      promptTokenCount: prompt,
      candidatesTokenCount: out,
      ...(cached ? { cachedContentTokenCount: cached } : {}),
      ...(thoughts ? { thoughtsTokenCount: thoughts } : {}),
      totalTokenCount: prompt + out + thoughts,
    };
    if (keep) usages.push(usage);
    const responseId = `fake-${++counter}`;
    const finishReason = step.blocked ? "SAFETY" : "STOP";
    const chunk = (p: FakeGeminiPart[], last: boolean) => ({
      candidates: [{ content: { parts: p, role: "model" }, index: 0, ...(last ? { finishReason } : {}) }],
      usageMetadata: last ? usage : { promptTokenCount: prompt, totalTokenCount: prompt },
      modelVersion: model,
      responseId,
    });
    if (!stream) {
      const data = JSON.stringify(chunk(parts, true));
      res.writeHead(200, { "content-type": "application/json; charset=UTF-8" });
      res.end(data);
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const chunks = parts.length ? parts.map((p, i) => chunk([p], i === parts.length - 1)) : [chunk([], true)];
    res.end(chunks.map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`).join(""));
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const match = /^\/v1beta\/models\/([^:]+):(streamGenerateContent|generateContent)$/.exec(url.pathname);
    const parts: Buffer[] = [];
    req.on("data", (p: Buffer) => parts.push(p));
    req.on("end", () => {
      const key = req.headers["x-goog-api-key"] ?? url.searchParams.get("key");
      if (key !== apiKey) {
        sendError(res, 400, "API key not valid. Please pass a valid API key.", [
          {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            reason: "API_KEY_INVALID",
            domain: "googleapis.com",
          },
        ]);
        return;
      }
      if (req.method === "GET" && url.pathname === "/v1beta/models") {
        // models.list: the chat models and an embedding model, which cannot generate content.
        const listed = [
          ...models.map((m) => ({
            name: `models/${m}`,
            supportedGenerationMethods: ["generateContent", "countTokens"],
          })),
          { name: "models/text-embedding-004", supportedGenerationMethods: ["embedContent"] },
        ];
        res.writeHead(200, { "content-type": "application/json; charset=UTF-8" });
        res.end(JSON.stringify({ models: listed }));
        return;
      }
      const raw = Buffer.concat(parts).toString("utf8");
      if (req.method === "POST" && url.pathname === "/v1beta/cachedContents") {
        createCache(res, raw);
        return;
      }
      const cacheName = /^\/v1beta\/(cachedContents\/[^/]+)$/.exec(url.pathname)?.[1];
      if (cacheName && (req.method === "GET" || req.method === "DELETE")) {
        const entry = caches.get(cacheName);
        if (!entry || entry.expiresAt <= Date.now()) {
          sendError(res, 404, `CachedContent not found: ${cacheName}`);
          return;
        }
        if (req.method === "DELETE") caches.delete(cacheName);
        res.writeHead(200, { "content-type": "application/json; charset=UTF-8" });
        res.end(req.method === "DELETE" ? "{}" : JSON.stringify(cacheView(entry)));
        return;
      }
      if (req.method !== "POST" || !match) {
        sendError(res, 404, `Method not found: ${url.pathname}`);
        return;
      }
      answer(res, decodeURIComponent(match[1]!), match[2] === "streamGenerateContent", raw);
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
    usages,
    rejected,
    caches: () => [...caches.values()],
    expireCaches: () => {
      for (const c of caches.values()) c.expiresAt = 0;
    },
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
