/**
 * Catching up after downtime. Discord replays missed events only when a session resumes; after a
 * restart (or a session Discord would not resume) the messages sent meanwhile are gone from the
 * gateway. The adapter keeps, per channel it handed messages from, the newest message id the gateway
 * recorded (durably, in the adapter's store); on each new session it reads what came after from the
 * channel history and passes it through the normal pipeline. The gateway's inbound ledger drops what
 * it already had.
 */
import type { Logger } from "../../core/logger.js";
import type { KeyValueStore } from "../../core/types.js";

const KEY = "backfill.cursors";
const DISCORD_EPOCH_MS = 1_420_070_400_000n;

/** When a snowflake id was created (epoch ms). */
export function snowflakeTime(id: string): number {
  return Number((BigInt(id) >> 22n) + DISCORD_EPOCH_MS);
}

const newer = (a: string, b: string | undefined) => b === undefined || BigInt(a) > BigInt(b);

export interface BackfillOptions {
  /** Only messages younger than this are caught up; 0 turns catching up off. */
  windowMs: number;
  /** Channels remembered (the most recently active). @defaultValue 50 */
  maxChannels?: number;
}

/** The per-channel cursors. */
export class BackfillCursors {
  private cursors: Record<string, string>;

  constructor(
    private readonly kv: KeyValueStore,
    private readonly logger: Logger,
    private readonly options: BackfillOptions,
  ) {
    this.cursors = this.load();
  }

  /** Records that the gateway has `messageId` of `channelId`. */
  seen(channelId: string, messageId: string): void {
    if (this.options.windowMs <= 0 || !newer(messageId, this.cursors[channelId])) return;
    delete this.cursors[channelId];
    this.cursors[channelId] = messageId;
    const ids = Object.keys(this.cursors);
    const max = this.options.maxChannels ?? 50;
    // Insertion order is recency order: drop the channels quiet for longest.
    for (const old of ids.slice(0, Math.max(0, ids.length - max))) delete this.cursors[old];
    this.kv.set(KEY, JSON.stringify(this.cursors));
  }

  /** Channels to catch up and the id to read after, for cursors inside the window. */
  due(now = Date.now()): { channelId: string; after: string }[] {
    if (this.options.windowMs <= 0) return [];
    return Object.entries(this.cursors)
      .filter(([, id]) => now - snowflakeTime(id) < this.options.windowMs)
      .map(([channelId, after]) => ({ channelId, after }));
  }

  /** Forgets a channel (deleted, or the bot lost access). */
  forget(channelId: string): void {
    delete this.cursors[channelId];
    this.kv.set(KEY, JSON.stringify(this.cursors));
  }

  private load(): Record<string, string> {
    const raw = this.kv.get(KEY);
    if (!raw) return {};
    try {
      const parsed: unknown = JSON.parse(raw);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
        return Object.fromEntries(
          Object.entries(parsed).filter(
            ([k, v]) => /^\d+$/.test(k) && typeof v === "string" && /^\d+$/.test(v),
          ),
        );
      }
    } catch {
      // fall through
    }
    this.logger.warn({}, "discord backfill cursors unreadable; starting afresh");
    return {};
  }
}
