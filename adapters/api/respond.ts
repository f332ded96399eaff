/**
 * The API server's answers: JSON with OpenAI's error body, the status a failed turn answers, the
 * `usage` object, and a reply's files as Herald's `herald_files`.
 */
import type { ServerResponse } from "node:http";
import type { OutboundMessage } from "../../core/types.js";

/** Tokens of one answer, as the response's `usage` reports them. */
export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}

/**
 * The HTTP status a failed turn answers, by its error code: rate limited → 429, model timeout → 504,
 * model unreachable or not configured → 503, the model endpoint refused the request → 502, the rest 500.
 */
export function failureStatus(code: string | undefined): {
  status: number;
  type: string;
  code: string;
  retry: boolean;
} {
  switch (code) {
    case "model_rate_limited":
      return { status: 429, type: "rate_limit_error", code: "rate_limit_exceeded", retry: true };
    case "model_timeout":
      return { status: 504, type: "server_error", code: "model_timeout", retry: true };
    case "model_unavailable":
      return { status: 503, type: "server_error", code: "model_unavailable", retry: true };
    case "config_missing":
      return { status: 503, type: "server_error", code: "model_not_configured", retry: false };
    case "model_error":
      return { status: 502, type: "server_error", code: "model_error", retry: false };
    default:
      return { status: 500, type: "server_error", code: code ?? "turn_failed", retry: false };
  }
}

/** The OpenAI `usage` object (zeros when the reply used no model: a command's). */
export function usageBody(usage: TokenUsage | undefined) {
  const prompt = usage?.promptTokens ?? 0;
  const completion = usage?.completionTokens ?? 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: usage?.cachedTokens ?? 0 },
  };
}

/** `messages[0].role` for the path `["messages", 0, "role"]`. */
export function fieldName(path: PropertyKey[]): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : `${i ? "." : ""}${String(p)}`)).join("");
}

/** OpenAI's error body. */
export function errorBody(message: string, type: string, code: string = type, param: string | null = null) {
  return { error: { message, type, param, code } };
}

/** Writes a JSON answer (nothing when the response already ended). */
export function writeJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.writableEnded) return;
  const data = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    "content-type": "application/json",
    "content-length": Buffer.byteLength(data),
  });
  res.end(data);
}

/**
 * Files of a reply (a spoken answer, a chart) as an extension of the message, `herald_files`: paths on
 * the gateway's disk, for clients on the same machine or volume. OpenAI clients ignore the field.
 */
export function filesOf(message: OutboundMessage): {
  herald_files?: { path: string; name: string; mime_type?: string; voice?: boolean }[];
} {
  if (!message.files?.length) return {};
  return {
    herald_files: message.files.map((f) => ({
      path: f.path,
      name: f.fileName ?? f.path.split("/").pop() ?? "file",
      ...(f.mimeType ? { mime_type: f.mimeType } : {}),
      ...(f.voice ? { voice: true } : {}),
    })),
  };
}

/** Statuses the openai SDK may retry on its own (others answer `x-should-retry: false` unless told). */
export const RETRYABLE_STATUS = new Set([429, 503, 504]);

/**
 * Answers a request with an HTTP error: OpenAI's `{error}` body, the model's Retry-After as
 * `retry-after` / `retry-after-ms`, and `x-should-retry: false` when a retry would not help.
 */
export function writeError(
  res: ServerResponse,
  status: number,
  message: string,
  type: string,
  options: { code?: string; retryAfterMs?: number | undefined; retry?: boolean; param?: string | null } = {},
): void {
  const headers: Record<string, string> = {};
  if (options.retryAfterMs !== undefined) {
    headers["retry-after"] = String(Math.max(1, Math.ceil(options.retryAfterMs / 1000)));
    headers["retry-after-ms"] = String(Math.round(options.retryAfterMs));
  }
  // The openai SDK (and those built on it) reads this before retrying on its own.
  if (!(options.retry ?? RETRYABLE_STATUS.has(status))) headers["x-should-retry"] = "false";
  writeJson(res, status, errorBody(message, type, options.code ?? type, options.param ?? null), headers);
}
