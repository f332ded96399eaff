import type Database from "better-sqlite3";
import type { ChatRef, OutboundMessage } from "../core/types.js";
import { uuidv7 } from "../core/uuid-v7.js";
import type { Outbox, OutboxItem } from "./types.js";

interface OutboxRow {
  id: string;
  chat: string;
  message: string;
  turn_id: string | null;
  chunks_sent: number;
  attempts: number;
  next_attempt_at: number;
  created_at: number;
  last_error: string | null;
}

function toItem(row: OutboxRow): OutboxItem {
  const item: OutboxItem = {
    id: row.id,
    chat: JSON.parse(row.chat) as ChatRef,
    message: JSON.parse(row.message) as OutboundMessage,
    chunksSent: row.chunks_sent,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    createdAt: row.created_at,
  };
  if (row.turn_id !== null) item.turnId = row.turn_id;
  if (row.last_error !== null) item.lastError = row.last_error;
  return item;
}

/** Options of `SqliteOutbox`. */
export interface SqliteOutboxOptions {
  /** Failed attempts after which `retryLater` gives up and marks the item failed. @defaultValue 10 */
  maxAttempts?: number | undefined;
}

/**
 * `Outbox` on the `outbox` table. Items are `pending` until `delivered` or `failed`; terminal rows stay
 * for inspection until `prune`. An item's id is its message's `idempotencyKey`.
 */
export class SqliteOutbox implements Outbox {
  readonly #maxAttempts: number;
  readonly #stmt;

  constructor(db: Database.Database, options: SqliteOutboxOptions = {}) {
    this.#maxAttempts = options.maxAttempts ?? 10;
    this.#stmt = {
      insert: db.prepare(
        `INSERT INTO outbox (id, chat, message, turn_id, next_attempt_at, created_at, status)
         VALUES (@id, @chat, @message, @turnId, @now, @now, 'pending')`,
      ),
      due: db.prepare<[number, number], OutboxRow>(
        `SELECT * FROM outbox WHERE status = 'pending' AND next_attempt_at <= ?
         ORDER BY created_at, rowid LIMIT ?`,
      ),
      pending: db.prepare<[], OutboxRow>(
        "SELECT * FROM outbox WHERE status = 'pending' ORDER BY created_at, rowid",
      ),
      chunkSent: db.prepare<[number, string]>(
        "UPDATE outbox SET chunks_sent = MAX(chunks_sent, ?) WHERE id = ? AND status = 'pending'",
      ),
      delivered: db.prepare<[string]>(
        "UPDATE outbox SET status = 'delivered' WHERE id = ? AND status = 'pending'",
      ),
      retryLater: db.prepare(
        `UPDATE outbox SET attempts = attempts + 1, last_error = @error, next_attempt_at = @at,
           status = CASE WHEN attempts + 1 >= @maxAttempts THEN 'failed' ELSE 'pending' END
         WHERE id = @id AND status = 'pending'`,
      ),
      failed: db.prepare<[string, string]>(
        "UPDATE outbox SET status = 'failed', last_error = ? WHERE id = ? AND status = 'pending'",
      ),
      prune: db.prepare<[number]>("DELETE FROM outbox WHERE status <> 'pending' AND created_at < ?"),
    };
  }

  /** Queues `message` for `chat`, due now. Its `idempotencyKey` is the new item's id. */
  add(
    chat: ChatRef,
    message: Omit<OutboundMessage, "idempotencyKey">,
    turnId?: string,
    now: number = Date.now(),
  ): OutboxItem {
    const id = uuidv7();
    const full: OutboundMessage = { ...message, idempotencyKey: id };
    this.#stmt.insert.run({
      id,
      chat: JSON.stringify(chat),
      message: JSON.stringify(full),
      turnId: turnId ?? null,
      now,
    });
    const item: OutboxItem = {
      id,
      chat,
      message: full,
      chunksSent: 0,
      attempts: 0,
      nextAttemptAt: now,
      createdAt: now,
    };
    if (turnId !== undefined) item.turnId = turnId;
    return item;
  }

  /** Pending items whose next attempt is at or before `now`, oldest first. @param limit @defaultValue 100 */
  due(now: number = Date.now(), limit = 100): OutboxItem[] {
    return this.#stmt.due.all(now, limit).map(toItem);
  }

  /** Every pending item, oldest first, whatever its next attempt time. Failed items are not included. */
  pending(): OutboxItem[] {
    return this.#stmt.pending.all().map(toItem);
  }

  /** Records that chunk `index` was confirmed, so a retry starts after it. */
  chunkSent(id: string, index: number): void {
    this.#stmt.chunkSent.run(index + 1, id);
  }

  delivered(id: string): void {
    this.#stmt.delivered.run(id);
  }

  /** Counts a failed attempt and schedules the next in `delayMs`; the last allowed attempt marks it failed. */
  retryLater(id: string, error: string, delayMs: number, now: number = Date.now()): void {
    this.#stmt.retryLater.run({ id, error, at: now + delayMs, maxAttempts: this.#maxAttempts });
  }

  /** Gives up on the item (a permanent platform error); it stays stored with `error`. */
  failed(id: string, error: string): void {
    this.#stmt.failed.run(error, id);
  }

  /** Not in the contract: deletes delivered and failed items created before `beforeMs`; returns how many. */
  prune(beforeMs: number): number {
    return this.#stmt.prune.run(beforeMs).changes;
  }
}
