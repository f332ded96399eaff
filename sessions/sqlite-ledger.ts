import type Database from "better-sqlite3";
import type { InboundMessage } from "../core/types.js";
import type { InboundLedger } from "./types.js";

/**
 * `InboundLedger` on the `inbound` table. A message is keyed by `(platform, messageId)`; its full JSON is
 * kept until it is handled, so a crash in between replays it from `unhandled()`.
 */
export class SqliteLedger implements InboundLedger {
  readonly #stmt;

  constructor(db: Database.Database) {
    this.#stmt = {
      record: db.prepare<[string, string, string, number]>(
        `INSERT OR IGNORE INTO inbound (platform, message_id, payload, status, received_at)
         VALUES (?, ?, ?, 'received', ?)`,
      ),
      markHandled: db.prepare<[string, string, string]>(
        "UPDATE inbound SET status = 'handled', outcome = ? WHERE platform = ? AND message_id = ?",
      ),
      unhandled: db.prepare<[], { payload: string }>(
        "SELECT payload FROM inbound WHERE status = 'received' ORDER BY received_at, rowid",
      ),
      prune: db.prepare<[number]>("DELETE FROM inbound WHERE status = 'handled' AND received_at < ?"),
    };
  }

  /** False for a duplicate: the message was recorded before (handled or not). */
  record(message: InboundMessage, now: number = Date.now()): boolean {
    return (
      this.#stmt.record.run(message.platform, message.messageId, JSON.stringify(message), now).changes === 1
    );
  }

  /** Idempotent; an unknown message is ignored. */
  markHandled(platform: string, messageId: string, outcome: string): void {
    this.#stmt.markHandled.run(outcome, platform, messageId);
  }

  /** Recorded but unhandled messages, in the order they were received. */
  unhandled(): InboundMessage[] {
    return this.#stmt.unhandled.all().map((row) => JSON.parse(row.payload) as InboundMessage);
  }

  /** Forgets handled entries received before `beforeMs`; a redelivery after that counts as new. */
  prune(beforeMs: number): number {
    return this.#stmt.prune.run(beforeMs).changes;
  }
}
