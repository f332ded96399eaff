/**
 * One POST to an OpenAI-compatible speech endpoint with classified errors and bounded retries:
 * 401/403 name the config key; 408, 429, 5xx, timeouts and network errors are retried with backoff
 * (retry-after honoured), at most `maxAttempts` attempts.
 */

import { ModelError } from "../../../core/errors.js";
import { sleep } from "../../../core/sleep.js";
import type { SpeechEndpoint } from "./types.js";

/** One request: `body()` is called per attempt (a FormData or string is rebuilt, never reused). */
export interface SpeechRequest {
  /** Path under `baseUrl`, e.g. `/audio/transcriptions`. */
  path: string;
  body: () => BodyInit;
  headers?: Record<string, string>;
  /** What the call does, for messages: "transcription", "speech synthesis". */
  what: string;
  signal?: AbortSignal;
}

/** Parses `retry-after` (seconds or an HTTP date) into milliseconds. */
export function parseRetryAfterMs(value: string | null, nowMs = Date.now()): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/** The provider's own words from an error body (`{"error":{"message"}}` or text), shortened. */
async function providerMessage(res: Response): Promise<string> {
  const text = await res.text().catch(() => "");
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const msg = typeof body.error === "string" ? body.error : (body.error?.message ?? body.message);
    if (typeof msg === "string") return msg.slice(0, 300);
  } catch {
    // Not JSON: the text itself is the message.
  }
  return text.slice(0, 300) || res.statusText;
}

/** Turns a non-2xx answer into a ModelError whose message says what to do. */
async function errorOf(
  res: Response,
  endpoint: SpeechEndpoint,
  what: string,
  keyName: string,
): Promise<ModelError> {
  const status = res.status;
  const said = await providerMessage(res);
  const where = `${endpoint.baseUrl} answered ${status} to the ${what} request`;
  if (status === 401 || status === 403) {
    const fix = endpoint.apiKey
      ? `${keyName} was refused: set a valid API key for this provider in ${keyName}`
      : `no API key is set: set ${keyName}`;
    return new ModelError(`${where} (${said}); ${fix}`, { code: "unauthorized", status });
  }
  if (status === 429) {
    const retryAfterMs = parseRetryAfterMs(res.headers.get("retry-after"));
    return new ModelError(`${where} (rate limited: ${said})`, {
      code: "model_rate_limited",
      status,
      retryable: true,
      retryAfterMs,
    });
  }
  if (status >= 500 || status === 408)
    return new ModelError(`${where} (${said}); the provider is failing, try again later`, {
      code: "model_unavailable",
      status,
      retryable: true,
      retryAfterMs: parseRetryAfterMs(res.headers.get("retry-after")),
    });
  if (status === 404)
    return new ModelError(
      `${where} (${said}); check the base URL (it ends in /v1 for most providers) and the model "${endpoint.model}"`,
      { code: "model_error", status },
    );
  return new ModelError(`${where} (${said})`, { code: "model_error", status });
}

/**
 * POSTs `request` to `endpoint` and resolves with the first 2xx response (body unread).
 * Rejects with a ModelError (`unauthorized`, `model_rate_limited`, `model_unavailable`, `model_error`;
 * `retryable` set on the ones another try may cure) after the last attempt, or with `signal.reason`
 * when the caller aborts.
 */
export async function postSpeech(endpoint: SpeechEndpoint, request: SpeechRequest): Promise<Response> {
  const maxAttempts = Math.max(1, endpoint.maxAttempts ?? 3);
  const timeoutMs = endpoint.timeoutMs ?? 120_000;
  const baseDelayMs = endpoint.retryBaseDelayMs ?? 500;
  const maxDelayMs = endpoint.maxRetryDelayMs ?? 30_000;
  const keyName = endpoint.apiKeyName ?? "the API key";
  const url = `${endpoint.baseUrl.replace(/\/+$/, "")}${request.path}`;
  const headers: Record<string, string> = { ...request.headers };
  if (endpoint.apiKey) headers.authorization = `Bearer ${endpoint.apiKey}`;
  const { signal } = request;
  for (let attempt = 1; ; attempt++) {
    signal?.throwIfAborted();
    const timeout = AbortSignal.timeout(timeoutMs);
    const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let error: ModelError;
    try {
      const res = await fetch(url, { method: "POST", headers, body: request.body(), signal: both });
      if (res.ok) return res;
      error = await errorOf(res, endpoint, request.what, keyName);
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      error = timeout.aborted
        ? new ModelError(`${url} gave no answer to the ${request.what} request within ${timeoutMs} ms`, {
            code: "model_unavailable",
            retryable: true,
            cause: err,
          })
        : new ModelError(`cannot reach ${url} for ${request.what}: ${describeCause(err)}`, {
            code: "model_unavailable",
            retryable: true,
            cause: err,
          });
    }
    if (!error.retryable || attempt >= maxAttempts) throw error;
    const backoffMs = baseDelayMs * 2 ** (attempt - 1) * (0.8 + Math.random() * 0.4);
    const delayMs = error.retryAfterMs ?? backoffMs;
    if (delayMs > maxDelayMs) throw error;
    endpoint.logger?.warn(
      { url, what: request.what, attempt, status: error.status, delayMs: Math.round(delayMs) },
      "voice request failed, retrying",
    );
    await sleep(delayMs, signal);
  }
}

/** fetch's TypeError hides the reason (ECONNREFUSED, ENOTFOUND) in `cause`. */
function describeCause(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : "";
  return `${err.message}${cause}`;
}
