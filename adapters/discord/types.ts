/**
 * Configuration and small shared types of the Discord adapter. discord.js types stay inside this folder.
 */
import type { StreamMode } from "../shared/reply-stream.js";

/** What `createDiscordAdapter` needs (the `discord` section of HeraldConfig plus the media cap). */
export interface DiscordAdapterConfig {
  /** `DISCORD_BOT_TOKEN`, from the developer portal (Applications → your app → Bot). */
  botToken?: string | undefined;
  /**
   * `DISCORD_API_URL`: the REST base as discord.js takes it (it appends `/v10`); proxies and tests.
   * @defaultValue "https://discord.com/api"
   */
  apiUrl?: string | undefined;
  /** `DISCORD_AUTO_THREAD`: a mention in a server channel opens a thread for the answer. @defaultValue false */
  autoThread?: boolean | undefined;
  /** `DISCORD_ALLOW_BOTS`: pass messages of other bots and webhooks on (never the bot's own). @defaultValue false */
  allowBots?: boolean | undefined;
  /** Inbound attachments larger than this are not downloaded. @defaultValue 20 MiB */
  mediaMaxBytes?: number | undefined;
  /** Register /new, /stop, /status, /help as native slash commands (only when the set changed). @defaultValue true */
  registerCommands?: boolean | undefined;
  /** Timeout of one REST request before discord.js retries it. @defaultValue 15000 */
  restTimeoutMs?: number | undefined;
  /**
   * A rate limit longer than this is not waited out inside `send`: it fails with a retryable
   * PlatformError carrying `retryAfterMs`, and the outbox waits. Shorter ones are waited out.
   * @defaultValue 5000
   */
  maxRateLimitWaitMs?: number | undefined;
  /** How long `start` waits for the gateway's READY. @defaultValue 30000 */
  readyTimeoutMs?: number | undefined;
  /**
   * `DISCORD_STREAM`: `edit` shows a reply as it is written, one message edited in place (at most one
   * edit per `streamIntervalMs`); `off` sends it whole when done. @defaultValue "edit"
   */
  stream?: StreamMode | undefined;
  /** Minimum time between two edits of a streamed reply. @defaultValue 1200 (5 edits per 5 s per channel) */
  streamIntervalMs?: number | undefined;
  /** Minimum time between two edits of the same message (tool progress). @defaultValue 1000 */
  editIntervalMs?: number | undefined;
  /** Typing lasts ~10 s on Discord; calls closer than this are skipped. @defaultValue 8000 */
  typingIntervalMs?: number | undefined;
  /**
   * After a restart, messages younger than this in channels the bot was active in are read from the
   * channel history and handled (the gateway drops what it already had); 0 turns it off.
   * @defaultValue 43200000 (12 h)
   */
  backfillWindowMs?: number | undefined;
}

/** The config with every default applied. */
export type ResolvedDiscordConfig = Required<{
  [K in keyof DiscordAdapterConfig]: NonNullable<DiscordAdapterConfig[K]>;
}>;

/** Discord's message length limit (characters). */
export const DISCORD_MAX_CHARS = 2000;

/** Discord's attachment count limit per message. */
export const DISCORD_MAX_FILES = 10;

/** Why an inbound Discord message is not passed to the gateway. */
export type SkipReason = "own" | "bot" | "system" | "empty";
