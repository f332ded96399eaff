/** Configuration of the Telegram adapter. grammY's types stay inside this folder. */
import type { StreamMode } from "../shared/reply-stream.js";

/** Telegram's send limits, as the adapter's per-chat budget applies them. */
export interface TelegramRateLimits {
  /** Messages per second in one chat (sends, edits, deletes and typing share it). @defaultValue 1 */
  perChatPerSecond: number;
  /** Calls one chat may make at once after a quiet spell. @defaultValue 3 */
  perChatBurst: number;
  /** Messages per minute in one group. @defaultValue 20 */
  perGroupPerMinute: number;
  /** Calls per second for the whole bot. @defaultValue 30 */
  globalPerSecond: number;
  /**
   * Longest a send waits for the chat's budget before it fails with a retryable PlatformError carrying
   * `retryAfterMs` (the outbox then retries from the next chunk). @defaultValue 10_000
   */
  maxWaitMs: number;
}

/** What `createTelegramAdapter` needs (built from `HeraldConfig.telegram` by `telegramConfigFrom`). */
export interface TelegramAdapterConfig {
  /** `TELEGRAM_BOT_TOKEN`. */
  botToken: string;
  /** `TELEGRAM_API_ROOT`, without a trailing slash. @defaultValue "https://api.telegram.org" */
  apiRoot?: string | undefined;
  /** `TELEGRAM_WEBHOOK_URL`: when set, updates arrive by webhook instead of long polling. */
  webhookUrl?: string | undefined;
  /**
   * `TELEGRAM_WEBHOOK_SECRET` (1–256 of `A-Z a-z 0-9 _ -`), checked against
   * `X-Telegram-Bot-Api-Secret-Token`. @defaultValue derived from the bot token (stable across restarts)
   */
  webhookSecret?: string | undefined;
  /** Inbound files larger than this are not downloaded. @defaultValue 20 MiB */
  mediaMaxBytes?: number | undefined;
  /** Long-poll timeout of `getUpdates`, in seconds. @defaultValue 30 */
  pollTimeoutSeconds?: number | undefined;
  /** First delay after a failed `getUpdates`; doubles up to `maxBackoffMs`. @defaultValue 1000 */
  backoffMs?: number | undefined;
  /** @defaultValue 30_000 */
  maxBackoffMs?: number | undefined;
  /** How long `stop()` waits for updates in hand to be recorded before it stops anyway. @defaultValue 2000 */
  stopGraceMs?: number | undefined;
  /** How long `start()` keeps retrying an unreachable API before it rejects. @defaultValue 30_000 */
  startTimeoutMs?: number | undefined;
  /**
   * `TELEGRAM_STREAM`: `edit` shows a reply as it is written, one message edited in place; `off` sends
   * it whole when done. @defaultValue "edit"
   */
  stream?: StreamMode | undefined;
  /** Overrides of Telegram's limits (tests, self-hosted Bot API servers without them). */
  limits?: Partial<TelegramRateLimits> | undefined;
}

/** The bot's own identity from `getMe`, which mention detection needs. */
export interface BotIdentity {
  id: number;
  username: string;
}
