/**
 * Turns a classified failure (each transport reads its own SDK's errors, agent/providers/) into the
 * `ModelError` the user reads.
 */
import { ModelError } from "../core/errors.js";
import type { AttemptFailure } from "./providers/index.js";

export type { AttemptFailure } from "./providers/index.js";
export { cancelledError, retryAfterMs } from "./providers/index.js";

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
  if (failure.category === "refusal") {
    return new ModelError(
      `Model '${model}' declined to answer this (${failure.detail})${which}; rephrase the request, or switch models with /model.`,
      { ...base, code: "model_refused", retryable: false },
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
