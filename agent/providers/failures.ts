/**
 * What every transport shares in reading failures: Retry-After, how providers phrase "the prompt does
 * not fit", the category of a failure, the cancelled error, and the failure a transport raises itself.
 */
import { HeraldError } from "../../core/errors.js";
import type { AttemptFailure, FailureCategory } from "./types.js";

/** How providers phrase "the prompt does not fit" (OpenAI, OpenRouter, llama.cpp, vLLM, Anthropic, Gemini, Bedrock). */
export const CONTEXT_TOO_LONG =
  /context[_ ]length|context window|maximum context|too many tokens|prompt is too long|exceeds? the (?:available )?context|reduce the length|input token count.*exceeds|input is too long/i;

/** The error a cancelled turn throws (recognised by `isAbortError`). */
export function cancelledError(reason: unknown): HeraldError {
  return new HeraldError("The turn was cancelled.", { code: "turn_cancelled", cause: reason });
}

/** `retry-after-ms` (OpenAI's own), else `retry-after` (seconds or an HTTP date), in ms. */
export function retryAfterMs(headers: Headers | undefined | null, now = Date.now()): number | undefined {
  const ms = headers?.get("retry-after-ms");
  if (ms && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const value = headers?.get("retry-after");
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.max(0, Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * A failure the transport recognised itself: a refusal, an answer cut off, a stream that ended early.
 * `classify` turns it into its `AttemptFailure` as is.
 */
export class TransportFailure extends Error {
  readonly failure: Omit<AttemptFailure, "cause">;
  constructor(failure: Omit<AttemptFailure, "cause">) {
    super(failure.detail);
    this.name = "TransportFailure";
    this.failure = failure;
  }
}

/** The refusal of a model that declined to answer (`why`: the API's stop reason). */
export function refusal(why: string): TransportFailure {
  return new TransportFailure({
    category: "refusal",
    kind: "stream",
    retry: false,
    detail: `the model declined to answer (${why})`,
  });
}

/** A stream that ended without any answer: worth another try. */
export function endedEarly(): TransportFailure {
  return new TransportFailure({
    category: "retryable",
    kind: "connection",
    retry: true,
    detail: "the stream ended without an answer",
  });
}

/** The category of an HTTP status failure with `detail` as the provider phrased it. */
export function statusCategory(status: number, detail: string): FailureCategory {
  if ((status === 400 || status === 413) && CONTEXT_TOO_LONG.test(detail)) return "context-too-long";
  if (status === 401 || status === 403) return "auth";
  if (status === 408 || status === 409 || status === 429 || status >= 500) return "retryable";
  return "invalid";
}

/** An `AttemptFailure` of an HTTP status (any SDK's error with `status`, `headers`, a message). */
export function statusFailure(
  status: number,
  detail: string,
  headers: Headers | undefined | null,
  cause: unknown,
): AttemptFailure {
  const category = statusCategory(status, detail);
  return {
    category,
    kind: "status",
    status,
    retry: category === "retryable",
    retryAfterMs: retryAfterMs(headers),
    detail,
    cause,
    contextTooLong: category === "context-too-long",
  };
}

/** The failure of a thrown value no SDK class matched: fetch's body reader says "terminated" on a drop. */
export function unknownFailure(err: unknown): AttemptFailure {
  if (err instanceof TransportFailure) return { ...err.failure, cause: err };
  const message = err instanceof Error ? err.message : String(err);
  return { category: "retryable", kind: "connection", retry: true, detail: message, cause: err };
}
