/**
 * Bot API failures in Herald's terms: what a failed `getUpdates` means for the poll loop, and what a
 * failed send means for the outbox (PlatformError with `retryable` / `retryAfterMs`). Messages name the
 * fix; no token ever reaches them (grammY's own messages carry only the method name).
 */
import { GrammyError, HttpError } from "grammy/web";
import { describeError, PlatformError } from "../../core/errors.js";
import type { AdapterStatus } from "../../core/types.js";

/** The Bot API's answer code, or undefined for a network failure. */
export function errorCode(err: unknown): number | undefined {
  return err instanceof GrammyError ? err.error_code : undefined;
}

/** Telegram's `retry_after`, in ms. */
export function retryAfterMs(err: unknown): number | undefined {
  if (!(err instanceof GrammyError)) return undefined;
  const seconds = err.parameters.retry_after;
  return typeof seconds === "number" ? seconds * 1000 : undefined;
}

/** Telegram rejected the HTML markup (the text can go again as plain text). */
export function isMarkupError(err: unknown): boolean {
  return (
    err instanceof GrammyError && err.error_code === 400 && /can't parse entities/i.test(err.description)
  );
}

/** "message is not modified", "message to delete not found": the wanted state is already there. */
export function isNoop(err: unknown): boolean {
  return (
    err instanceof GrammyError &&
    err.error_code === 400 &&
    /message is not modified|message to (delete|edit) not found/i.test(err.description)
  );
}

export const BAD_TOKEN_MESSAGE =
  "the Telegram Bot API refused TELEGRAM_BOT_TOKEN: the token is wrong or was revoked. Fix: copy the bot's current token from @BotFather (/mybots → API Token) into TELEGRAM_BOT_TOKEN.";

export const CONFLICT_MESSAGE =
  "another process is receiving updates for this bot token (409 Conflict). Fix: stop the other Herald or bot instance using TELEGRAM_BOT_TOKEN (or revoke the token with @BotFather if you don't know where it runs); Herald keeps retrying.";

export type PollVerdict =
  | { kind: "fatal"; message: string }
  | { kind: "webhook"; message: string }
  | {
      kind: "retry";
      message: string;
      delayMs: number;
      level: "warn" | "error";
      state: AdapterStatus["state"];
    };

/** What to do after the `failures`-th failed `getUpdates` in a row. */
export function classifyPollError(
  err: unknown,
  failures: number,
  backoff: { backoffMs: number; maxBackoffMs: number },
): PollVerdict {
  const exponential = Math.min(backoff.maxBackoffMs, backoff.backoffMs * 2 ** (failures - 1));
  // Jitter keeps many restarted bots from polling in lockstep.
  const delayMs = Math.round(exponential * (0.8 + Math.random() * 0.4));
  const code = errorCode(err);
  if (code === 401 || code === 404) return { kind: "fatal", message: BAD_TOKEN_MESSAGE };
  if (code === 409 && err instanceof GrammyError && /webhook/i.test(err.description)) {
    return {
      kind: "webhook",
      message: "a webhook is set for this bot; deleting it to receive by long polling",
    };
  }
  if (code === 409) {
    return {
      kind: "retry",
      message: CONFLICT_MESSAGE,
      // The other consumer is likely still there: try again only after the longest backoff.
      delayMs: backoff.maxBackoffMs,
      level: "error",
      state: "failed",
    };
  }
  const after = retryAfterMs(err);
  if (after !== undefined) {
    return {
      kind: "retry",
      message: "telegram asked to wait before polling again",
      delayMs: after,
      level: "warn",
      state: "reconnecting",
    };
  }
  return {
    kind: "retry",
    message:
      err instanceof HttpError
        ? "telegram unreachable, reconnecting"
        : "telegram getUpdates failed, retrying",
    delayMs,
    level: "warn",
    state: "reconnecting",
  };
}

/**
 * A failed call as the outbox sees it. 429 and 5xx and network failures are retryable; other 4xx are
 * not (the same request would fail the same way).
 */
export function toPlatformError(err: unknown, what: string): PlatformError {
  if (err instanceof PlatformError) return err;
  const code = errorCode(err);
  const after = retryAfterMs(err);
  if (code === 429) {
    return new PlatformError("telegram", `Telegram rate limit on ${what}`, {
      code: "platform_rate_limited",
      retryable: true,
      retryAfterMs: after ?? 1000,
      cause: err,
    });
  }
  if (code === 401 || code === 404) {
    return new PlatformError("telegram", `${what} failed: ${BAD_TOKEN_MESSAGE}`, {
      code: "platform_auth_failed",
      cause: err,
    });
  }
  if (code === 403) {
    const reason = err instanceof GrammyError ? err.description : "forbidden";
    return new PlatformError(
      "telegram",
      `${what} refused (${reason}): the user blocked the bot or removed it from the chat`,
      {
        cause: err,
      },
    );
  }
  if (code !== undefined && code < 500) {
    const reason = err instanceof GrammyError ? err.description : String(code);
    return new PlatformError("telegram", `${what} refused: ${reason}`, { cause: err });
  }
  return new PlatformError("telegram", `${what} failed: ${describeError(err)}`, {
    retryable: true,
    ...(after !== undefined ? { retryAfterMs: after } : {}),
    // A network error's inner error carries the request URL, which contains the token: leave it out.
    cause: err instanceof HttpError ? undefined : err,
  });
}
