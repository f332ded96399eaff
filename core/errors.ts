/**
 * The one error base of Herald. Every error the gateway raises on purpose is a HeraldError with a
 * string-literal `code`; callers branch on `code` and `retryable`, never on message text.
 */
export type HeraldErrorCode =
  | "config_invalid"
  | "config_missing"
  | "unauthorized"
  | "platform_error"
  | "platform_rate_limited"
  | "platform_auth_failed"
  | "model_error"
  | "model_rate_limited"
  | "model_unavailable"
  | "model_timeout"
  | "model_context_too_long"
  | "model_refused"
  | "tool_error"
  | "tool_invalid_args"
  | "turn_cancelled"
  | "turn_timeout"
  | "turn_crashed"
  | "iteration_limit"
  | "state_error"
  | "not_found"
  | "invalid_input";

export interface HeraldErrorOptions {
  code: HeraldErrorCode;
  cause?: unknown;
  /** Whether trying the same operation again may succeed. @defaultValue false */
  retryable?: boolean;
}

/** Base error: `message` says what is wrong and how to fix it. */
export class HeraldError extends Error {
  readonly code: HeraldErrorCode;
  readonly retryable: boolean;

  constructor(message: string, options: HeraldErrorOptions) {
    super(message, { cause: options.cause });
    this.name = "HeraldError";
    this.code = options.code;
    this.retryable = options.retryable ?? false;
  }
}

/** A configuration value is missing or invalid; `key` names it (env name or config.yaml path). */
export class ConfigError extends HeraldError {
  readonly key: string;
  constructor(key: string, message: string, options: { cause?: unknown } = {}) {
    super(message, { code: "config_invalid", cause: options.cause });
    this.name = "ConfigError";
    this.key = key;
  }
}

/** A platform refused or failed a call. `retryAfterMs` is set when the platform said how long to wait. */
export class PlatformError extends HeraldError {
  readonly platform: string;
  readonly retryAfterMs: number | undefined;
  constructor(
    platform: string,
    message: string,
    options: { code?: HeraldErrorCode; cause?: unknown; retryable?: boolean; retryAfterMs?: number } = {},
  ) {
    super(message, {
      code: options.code ?? "platform_error",
      cause: options.cause,
      retryable: options.retryable ?? false,
    });
    this.name = "PlatformError";
    this.platform = platform;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** The model endpoint failed. `status` is the HTTP status when there was one. */
export class ModelError extends HeraldError {
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  constructor(
    message: string,
    options: {
      code?: HeraldErrorCode;
      cause?: unknown;
      retryable?: boolean;
      status?: number;
      retryAfterMs?: number;
    } = {},
  ) {
    super(message, {
      code: options.code ?? "model_error",
      cause: options.cause,
      retryable: options.retryable ?? false,
    });
    this.name = "ModelError";
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** True when `err` is an abort (AbortSignal fired), whatever library threw it. */
export function isAbortError(err: unknown): boolean {
  if (err instanceof HeraldError) return err.code === "turn_cancelled";
  if (!(err instanceof Error)) return false;
  return err.name === "AbortError" || err.name === "APIUserAbortError";
}

/** A short, log-safe description of any thrown value. */
export function describeError(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}
