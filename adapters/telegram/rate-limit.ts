/**
 * One send budget per chat, within Telegram's limits: about one call per second per chat (sends, edits,
 * deletes and typing share it), 20 new messages per minute per group, 30 calls per second per bot. A 429
 * blocks only its chat for `retry_after`. Waiting is a timer on the caller's own promise (the outbox's
 * per-chat chain), never a sleep in an update handler; a wait longer than `maxWaitMs` is not taken but
 * returned as a retryable PlatformError with `retryAfterMs`, so the outbox reschedules.
 */

import { PlatformError } from "../../core/errors.js";
import { sleep } from "../../core/sleep.js";
import { isGroupChatId } from "./parse.js";
import type { TelegramRateLimits } from "./types.js";

export const DEFAULT_LIMITS: TelegramRateLimits = {
  perChatPerSecond: 1,
  perChatBurst: 3,
  perGroupPerMinute: 20,
  globalPerSecond: 30,
  maxWaitMs: 10_000,
};

/**
 * A virtual schedule per key (the generic cell rate algorithm): a call may go once the key's theoretical
 * arrival time, less the burst tolerance, has come; each call moves that time on by one interval.
 */
class Schedule {
  private readonly tat = new Map<string, number>();
  private readonly toleranceMs: number;

  constructor(
    private readonly intervalMs: number,
    burst: number,
  ) {
    this.toleranceMs = Math.max(0, burst - 1) * intervalMs;
  }

  /** Milliseconds until a call may go; with `spare`, until it may go and leave that many calls free. */
  waitMs(key: string, now: number, spare = 0): number {
    const tat = Math.max(this.tat.get(key) ?? now, now);
    const wait = tat + spare * this.intervalMs - this.toleranceMs - now;
    // Sub-millisecond remainders are float drift of the summed intervals, not a real wait.
    return wait < 1 ? 0 : Math.ceil(wait);
  }

  reserve(key: string, now: number): void {
    const tat = Math.max(this.tat.get(key) ?? now, now);
    this.tat.set(key, tat + this.intervalMs);
    // Keys whose schedule has fully drained hold no information: forget them (bounded memory).
    if (this.tat.size > 10_000) {
      for (const [k, t] of this.tat) if (t + this.toleranceMs < now) this.tat.delete(k);
    }
  }
}

/** What a call is: a new message counts against the group's per-minute limit, other calls do not. */
export type CallKind = "message" | "other";

export class SendBudget {
  private readonly perChat: Schedule;
  private readonly perGroup: Schedule;
  private readonly global: Schedule;
  private readonly blockedUntil = new Map<string, number>();

  constructor(
    private readonly limits: TelegramRateLimits = DEFAULT_LIMITS,
    private readonly now: () => number = Date.now,
  ) {
    this.perChat = new Schedule(1000 / limits.perChatPerSecond, limits.perChatBurst);
    this.perGroup = new Schedule(60_000 / limits.perGroupPerMinute, limits.perGroupPerMinute);
    this.global = new Schedule(1000 / limits.globalPerSecond, limits.globalPerSecond);
  }

  /** Milliseconds until a call of `kind` in `chatId` may go (0: now). */
  waitMs(chatId: string, kind: CallKind): number {
    const now = this.now();
    let wait = Math.max(0, (this.blockedUntil.get(chatId) ?? 0) - now);
    wait = Math.max(wait, this.perChat.waitMs(chatId, now), this.global.waitMs("", now));
    if (kind === "message" && isGroupChatId(chatId)) wait = Math.max(wait, this.perGroup.waitMs(chatId, now));
    return wait;
  }

  private reserve(chatId: string, kind: CallKind): void {
    const now = this.now();
    this.perChat.reserve(chatId, now);
    this.global.reserve("", now);
    if (kind === "message" && isGroupChatId(chatId)) this.perGroup.reserve(chatId, now);
  }

  /**
   * Takes the chat's next slot, waiting for it when it is at most `maxWaitMs` away.
   * @throws PlatformError (retryable, `retryAfterMs`) when the slot is further away, or the chat is
   *   blocked by a 429 for longer; nothing is reserved then.
   */
  async take(chatId: string, kind: CallKind, signal?: AbortSignal): Promise<void> {
    const wait = this.waitMs(chatId, kind);
    if (wait > this.limits.maxWaitMs || this.blockedMs(chatId) > 0) {
      throw rateLimited(chatId, Math.max(wait, 1));
    }
    this.reserve(chatId, kind);
    if (wait > 0) await sleep(wait, signal);
  }

  /** Takes a slot only if one is free now (typing: skipped rather than delayed). */
  tryTake(chatId: string, kind: CallKind = "other"): boolean {
    if (this.waitMs(chatId, kind) > 0) return false;
    this.reserve(chatId, kind);
    return true;
  }

  /**
   * Takes a slot only if the chat keeps another one free now: what "typing…" takes, so that showing it
   * never makes the reply that follows wait for the chat's next second.
   */
  tryTakeSpare(chatId: string): boolean {
    if (this.waitMs(chatId, "other") > 0 || this.perChat.waitMs(chatId, this.now(), 1) > 0) return false;
    this.reserve(chatId, "other");
    return true;
  }

  /** Honours a 429: nothing goes to `chatId` for `retryAfterMs`. */
  block(chatId: string, retryAfterMs: number): void {
    const until = this.now() + retryAfterMs;
    this.blockedUntil.set(chatId, Math.max(until, this.blockedUntil.get(chatId) ?? 0));
  }

  /** Milliseconds `chatId` stays blocked by a 429 (0: not blocked). */
  blockedMs(chatId: string): number {
    const until = this.blockedUntil.get(chatId);
    if (until === undefined) return 0;
    const left = until - this.now();
    if (left <= 0) this.blockedUntil.delete(chatId);
    return Math.max(0, left);
  }
}

/** The error a send fails with when Telegram (or the budget) says to wait. */
export function rateLimited(chatId: string, retryAfterMs: number, cause?: unknown): PlatformError {
  return new PlatformError(
    "telegram",
    `Telegram rate limit for chat ${chatId}: retry in ${Math.ceil(retryAfterMs / 1000)} s`,
    { code: "platform_rate_limited", retryable: true, retryAfterMs, cause },
  );
}
