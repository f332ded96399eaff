/**
 * Turns what the openai SDK throws into `ModelError`s with user-phrased messages, and decides which
 * failures are worth another try.
 */
import { HeraldError, ModelError } from "../core/errors.js";
import { loadedOpenAI } from "./openai-sdk.js";

/** How one attempt failed. `retry`: the same request may succeed later (429, 5xx, network, timeout). */
export interface AttemptFailure {
  kind: "status" | "connection" | "timeout" | "stream";
  status?: number | undefined;
  retry: boolean;
  retryAfterMs?: number | undefined;
  detail: string;
  cause: unknown;
  /** A 400 saying the request is longer than the model's context: compressing may help. */
  contextTooLong?: boolean | undefined;
}

/** How providers phrase "the prompt does not fit" in a 400 (OpenAI, OpenRouter, llama.cpp, vLLM, Anthropic). */
const CONTEXT_TOO_LONG =
  /context[_ ]length|context window|maximum context|too many tokens|prompt is too long|exceeds? the (?:available )?context|reduce the length/i;

/** The error a cancelled turn throws (recognised by `isAbortError`). */
export function cancelledError(reason: unknown): HeraldError {
  return new HeraldError("The turn was cancelled.", { code: "turn_cancelled", cause: reason });
}

/** `retry-after-ms` (OpenAI's own), else `retry-after` (seconds or an HTTP date), in ms. */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  const ms = headers?.get("retry-after-ms");
  if (ms && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const value = headers?.get("retry-after");
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.max(0, Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Classifies a thrown value of one attempt (aborts are handled before this is called). */
export function classifyFailure(err: unknown): AttemptFailure {
  // Not loaded: no request went out, so nothing thrown is the SDK's.
  const sdk = loadedOpenAI();
  if (sdk && err instanceof sdk.APIConnectionTimeoutError) {
    return { kind: "timeout", retry: true, detail: "timed out", cause: err };
  }
  if (sdk && err instanceof sdk.APIConnectionError) {
    const cause = err.cause instanceof Error ? err.cause.message : err.message;
    return { kind: "connection", retry: true, detail: cause, cause: err };
  }
  if (sdk && err instanceof sdk.APIError) {
    const status = err.status;
    if (status === undefined) {
      // An error event inside an SSE stream: the server failed mid-answer.
      return { kind: "stream", retry: true, detail: err.message, cause: err };
    }
    const retry = status === 408 || status === 409 || status === 429 || status >= 500;
    const detail =
      err.error && typeof err.error === "object"
        ? String((err.error as { message?: unknown }).message ?? err.message)
        : err.message;
    return {
      kind: "status",
      status,
      retry,
      retryAfterMs: retryAfterMs(err.headers),
      detail,
      cause: err,
      contextTooLong: (status === 400 || status === 413) && CONTEXT_TOO_LONG.test(detail),
    };
  }
  if (err instanceof ModelError) {
    return { kind: "stream", status: err.status, retry: err.retryable, detail: err.message, cause: err };
  }
  // fetch's body reader throws plain errors ("terminated") when the connection drops mid-stream.
  const message = err instanceof Error ? err.message : String(err);
  return { kind: "connection", retry: true, detail: message, cause: err };
}

export interface FailureContext {
  baseUrl: string;
  models: string[];
  attempts: number;
  timeoutMs: number;
  /** The provider of the last model tried, when it is not the legacy endpoint (names its settings). */
  provider?: { name: string; apiKeyEnv?: string | undefined } | undefined;
}

/** The final ModelError for a failure, phrased for the user who sees it. */
export function toModelError(failure: AttemptFailure, ctx: FailureContext): ModelError {
  const tries = ctx.attempts === 1 ? "1 try" : `${ctx.attempts} tries`;
  const which = ctx.models.length > 1 ? ` (models tried: ${ctx.models.join(", ")})` : "";
  const model = ctx.models[ctx.models.length - 1] ?? "";
  const base = { cause: failure.cause, status: failure.status, retryAfterMs: failure.retryAfterMs };
  const p = ctx.provider;
  const keyName = p ? (p.apiKeyEnv ?? `the api_key_env of provider '${p.name}'`) : "OPENAI_API_KEY";
  const urlName = p ? `the base_url of provider '${p.name}'` : "OPENAI_BASE_URL";
  const modelName = p ? "model.default and the provider's models in config.yaml" : "HERALD_MODEL";
  if (failure.contextTooLong) {
    return new ModelError(
      `The conversation is longer than the context of model '${model}' (${failure.detail}); send /new to start a fresh session, or raise its context_tokens if the model allows more.`,
      { ...base, code: "model_context_too_long", retryable: false },
    );
  }
  switch (failure.kind) {
    case "timeout":
      return new ModelError(
        `The model endpoint did not answer within ${seconds(ctx.timeoutMs)} s after ${tries}${which}; try again in a minute.`,
        { ...base, code: "model_timeout", retryable: true },
      );
    case "connection":
      return new ModelError(
        `Cannot reach the model endpoint at ${ctx.baseUrl} after ${tries}${which} (${failure.detail}); check ${urlName} and that the server is running.`,
        { ...base, code: "model_unavailable", retryable: true },
      );
    case "stream":
      return new ModelError(
        `The model endpoint failed while answering after ${tries}${which} (${failure.detail}); try again in a minute.`,
        { ...base, code: "model_unavailable", retryable: true },
      );
    case "status":
      break;
  }
  const status = failure.status ?? 0;
  if (status === 401) {
    return new ModelError(`The model endpoint answered 401: check ${keyName}.`, {
      ...base,
      retryable: false,
    });
  }
  if (status === 403) {
    return new ModelError(
      `The model endpoint answered 403 (forbidden) for model '${model}': check that ${keyName} may use it.`,
      { ...base, retryable: false },
    );
  }
  if (status === 404) {
    return new ModelError(
      `The model endpoint answered 404 for model '${model}'${which}: check ${modelName} and ${urlName} (${ctx.baseUrl}).`,
      { ...base, retryable: false },
    );
  }
  if (status === 429) {
    return new ModelError(
      `The model endpoint is rate limiting requests (429) after ${tries}${which}; try again in a minute.`,
      { ...base, code: "model_rate_limited", retryable: true },
    );
  }
  if (status >= 500 || failure.retry) {
    return new ModelError(
      `The model endpoint is not answering (${status}) after ${tries}${which}; try again in a minute.`,
      { ...base, code: "model_unavailable", retryable: true },
    );
  }
  return new ModelError(`The model endpoint rejected the request (${status}): ${failure.detail}`, {
    ...base,
    retryable: false,
  });
}

/** `120` for 120,000 ms, `0.1` for 100 ms. */
function seconds(ms: number): string {
  return ms >= 10_000 ? String(Math.round(ms / 1000)) : String(Math.round(ms / 100) / 10);
}
