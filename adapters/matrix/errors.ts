/**
 * matrix-js-sdk errors → `PlatformError`: rate limits (`M_LIMIT_EXCEEDED`, 429) carry the server's wait,
 * server errors and dropped connections are retryable, refusals (403, 404, bad token) are not.
 */
import { ConnectionError, HTTPError, MatrixError } from "matrix-js-sdk";
import { PlatformError } from "../../core/errors.js";

/** The homeserver's status code and Matrix error code, when `err` came from an HTTP answer. */
export function httpFacts(err: unknown): { status?: number | undefined; errcode?: string | undefined } {
  if (err instanceof MatrixError) return { status: err.httpStatus, errcode: err.errcode };
  if (err instanceof HTTPError) return { status: err.httpStatus };
  return {};
}

/** A short log-safe description (the SDK's messages carry the URL, never the token). */
export function describeMatrixError(err: unknown): string {
  const { status, errcode } = httpFacts(err);
  if (status !== undefined) return `${errcode ?? "HTTP"} ${status}`;
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

/** Wraps any error from a homeserver call as a PlatformError, keeping retryability and the wait. */
export function toPlatformError(err: unknown, what: string): PlatformError {
  if (err instanceof PlatformError) return err;
  if (err instanceof ConnectionError || (err instanceof Error && err.name === "AbortError")) {
    return new PlatformError(
      "matrix",
      `${what} failed: the homeserver could not be reached (${err.message}).`,
      {
        cause: err,
        retryable: true,
      },
    );
  }
  if (err instanceof HTTPError) {
    const { status, errcode } = httpFacts(err);
    let retryAfterMs: number | undefined;
    try {
      retryAfterMs = err.getRetryAfterMs() ?? undefined;
    } catch {
      retryAfterMs = undefined;
    }
    if (err.isRateLimitError() || status === 429) {
      return new PlatformError("matrix", `${what} was rate limited by the homeserver.`, {
        code: "platform_rate_limited",
        cause: err,
        retryable: true,
        retryAfterMs: retryAfterMs ?? 1000,
      });
    }
    const retryable = status === undefined || status >= 500 || status === 408;
    const code = status === 401 || errcode === "M_UNKNOWN_TOKEN" ? "platform_auth_failed" : "platform_error";
    const hint =
      errcode === "M_FORBIDDEN" ? " The bot is not allowed there (not joined, or lacks power level)." : "";
    return new PlatformError(
      "matrix",
      `${what} failed: ${errcode ?? "HTTP"} ${status ?? ""}.${hint}`.trim(),
      {
        code,
        cause: err,
        retryable,
      },
    );
  }
  return new PlatformError("matrix", `${what} failed: ${err instanceof Error ? err.message : String(err)}`, {
    cause: err,
    retryable: true,
  });
}
