/**
 * discord.js failures → PlatformError with `retryable` / `retryAfterMs` for the outbox, and start-up
 * failures → messages that name the fix (the token, the developer portal's intent switch).
 */
import { DiscordAPIError, DiscordjsErrorCodes, HTTPError, RateLimitError } from "discord.js";
import { PlatformError } from "../../core/errors.js";

/** discord.js's own error codes we branch on (from `DiscordjsErrorCodes`). */
const TOKEN_INVALID: string = DiscordjsErrorCodes.TokenInvalid;

/** Discord JSON error codes with a known fix. */
const MISSING_ACCESS = 50001;
const MISSING_PERMISSIONS = 50013;
const CANNOT_DM_USER = 50007;

export const TOKEN_FIX =
  "create a new token in the Discord developer portal (https://discord.com/developers/applications → your app → Bot → Reset Token) and set DISCORD_BOT_TOKEN to it";

export const INTENT_FIX =
  "in the Discord developer portal (https://discord.com/developers/applications → your app → Bot → Privileged Gateway Intents) turn on MESSAGE CONTENT INTENT, save, and restart Herald";

/** The error `start()` rejects with when login fails; names the fix for the known causes. */
export function loginError(err: unknown, closeCode: number | undefined): PlatformError {
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown })?.code;
  if (code === TOKEN_INVALID || closeCode === 4004 || /authentication failed/i.test(message)) {
    return new PlatformError(
      "discord",
      `DISCORD_BOT_TOKEN was rejected by Discord (401 / gateway close 4004): the token is wrong, was reset, or belongs to no bot. Fix: ${TOKEN_FIX}.`,
      { code: "platform_auth_failed", cause: err },
    );
  }
  if (closeCode === 4014 || /disallowed intents/i.test(message)) {
    return new PlatformError(
      "discord",
      `Discord refused the Message Content intent (gateway close 4014, disallowed intents): the bot cannot read messages without it. Fix: ${INTENT_FIX}.`,
      { code: "platform_auth_failed", cause: err },
    );
  }
  if (closeCode === 4013 || /invalid intents/i.test(message)) {
    return new PlatformError("discord", `Discord rejected the gateway intents (close 4013): ${message}.`, {
      code: "platform_error",
      cause: err,
    });
  }
  return new PlatformError("discord", `Could not connect to Discord: ${message}.`, {
    code: "platform_error",
    cause: err,
    retryable: true,
  });
}

/** Maps a failed REST call to a PlatformError. `what` names the call and channel for the message. */
export function restError(err: unknown, what: string): PlatformError {
  if (err instanceof PlatformError) return err;
  if (err instanceof RateLimitError) {
    return new PlatformError("discord", `Discord rate-limited ${what}; retry in ${err.retryAfter} ms.`, {
      code: "platform_rate_limited",
      cause: err,
      retryable: true,
      retryAfterMs: Math.max(err.retryAfter, err.sublimitTimeout, 0) || err.timeToReset,
    });
  }
  if (err instanceof DiscordAPIError) {
    const status = err.status;
    if (status === 401) {
      return new PlatformError(
        "discord",
        `Discord rejected the bot token during ${what}. Fix: ${TOKEN_FIX}.`,
        {
          code: "platform_auth_failed",
          cause: err,
        },
      );
    }
    if (err.code === MISSING_PERMISSIONS || err.code === MISSING_ACCESS) {
      return new PlatformError(
        "discord",
        `Discord refused ${what}: the bot lacks access or permissions there (${err.message}). Fix: give the bot's role View Channel, Send Messages, Send Messages in Threads, Create Public Threads and Attach Files in that channel.`,
        { cause: err },
      );
    }
    if (err.code === CANNOT_DM_USER) {
      return new PlatformError(
        "discord",
        `Discord refused ${what}: the user does not accept direct messages from this bot.`,
        { cause: err },
      );
    }
    return new PlatformError(
      "discord",
      `Discord refused ${what} (${status}, code ${err.code}): ${err.message}`,
      {
        cause: err,
        retryable: status === 408 || status === 429,
      },
    );
  }
  if (err instanceof HTTPError) {
    return new PlatformError("discord", `Discord failed ${what} (${err.status}).`, {
      cause: err,
      retryable: true,
    });
  }
  const message = err instanceof Error ? err.message : String(err);
  // Timeouts and connection errors: the request may or may not have arrived; nonces make a retry safe.
  return new PlatformError("discord", `Could not reach Discord for ${what}: ${message}`, {
    cause: err,
    retryable: true,
  });
}

/** The Discord JSON error code of a failed call, if it has one. */
export function apiCode(err: unknown): number | string | undefined {
  return err instanceof DiscordAPIError ? err.code : undefined;
}
