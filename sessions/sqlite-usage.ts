/**
 * `SqliteUsageLedger`: token usage per turn and model in the `usage` table (migrations v4, v6: cache writes and reasoning tokens), summed per
 * session, per model and per user.
 */
import type Database from "better-sqlite3";
import type { ModelUsage } from "../core/turn.js";
import type { UsageLedger, UsageLine } from "./types.js";

interface Row {
  model: string;
  user?: string;
  prompt: number;
  completion: number;
  cached: number;
  written: number;
  reasoning: number;
  calls: number;
}

const SUMS =
  "SUM(prompt_tokens) AS prompt, SUM(completion_tokens) AS completion, SUM(cached_tokens) AS cached, " +
  "SUM(cache_write_tokens) AS written, SUM(reasoning_tokens) AS reasoning, SUM(calls) AS calls";

const line = (r: Row): UsageLine => ({
  model: r.model,
  ...(r.user !== undefined ? { user: r.user } : {}),
  promptTokens: r.prompt,
  completionTokens: r.completion,
  cachedTokens: r.cached,
  cacheWriteTokens: r.written,
  reasoningTokens: r.reasoning,
  calls: r.calls,
});

export class SqliteUsageLedger implements UsageLedger {
  readonly #insert: Database.Statement;
  readonly #session: Database.Statement;
  readonly #turn: Database.Statement;
  readonly #byModel: Database.Statement;
  readonly #byUser: Database.Statement;
  readonly #first: Database.Statement<[], { first: number | null }>;

  constructor(db: Database.Database) {
    this.#insert = db.prepare(
      `INSERT OR REPLACE INTO usage (turn_id, model, session_id, user_id, platform, prompt_tokens,
         completion_tokens, cached_tokens, cache_write_tokens, reasoning_tokens, calls, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#session = db.prepare(
      `SELECT model, ${SUMS} FROM usage WHERE session_id = ? GROUP BY model ORDER BY MIN(created_at), model`,
    );
    this.#turn = db.prepare(
      `SELECT model, prompt_tokens AS prompt, completion_tokens AS completion, cached_tokens AS cached,
         cache_write_tokens AS written, reasoning_tokens AS reasoning, calls FROM usage WHERE turn_id = ?`,
    );
    this.#byModel = db.prepare(
      `SELECT model, ${SUMS} FROM usage WHERE created_at >= ? AND created_at < ? GROUP BY model ORDER BY prompt DESC, model`,
    );
    this.#byUser = db.prepare(
      `SELECT platform || ':' || user_id AS user, model, ${SUMS} FROM usage WHERE created_at >= ? AND created_at < ?
         GROUP BY platform, user_id, model ORDER BY user, prompt DESC`,
    );
    this.#first = db.prepare("SELECT MIN(created_at) AS first FROM usage");
  }

  record(
    turn: { id: string; sessionId: string; userId: string; chat: { platform: string } },
    lines: readonly ModelUsage[],
    now: number,
  ): void {
    for (const l of lines) {
      this.#insert.run(
        turn.id,
        l.model,
        turn.sessionId,
        turn.userId,
        turn.chat.platform,
        l.promptTokens,
        l.completionTokens,
        l.cachedTokens,
        l.cacheWriteTokens ?? 0,
        l.reasoningTokens ?? 0,
        l.calls,
        now,
      );
    }
  }

  forSession(sessionId: string): UsageLine[] {
    return (this.#session.all(sessionId) as Row[]).map(line);
  }

  forTurn(turnId: string): UsageLine[] {
    return (this.#turn.all(turnId) as Row[]).map(line);
  }

  summary(options: {
    since?: number | undefined;
    until?: number | undefined;
    by: "model" | "user";
  }): UsageLine[] {
    const statement = options.by === "user" ? this.#byUser : this.#byModel;
    return (statement.all(options.since ?? 0, options.until ?? Number.MAX_SAFE_INTEGER) as Row[]).map(line);
  }

  /** When the oldest usage row was written (epoch ms), or undefined when there is none. */
  firstAt(): number | undefined {
    return this.#first.get()?.first ?? undefined;
  }
}
