/**
 * `SqliteUsageLedger`: token usage per turn and model in the `usage` table (migrations v4, v6: cache writes and reasoning tokens), summed per
 * session, per model, per user and per agent. A row's agent is read from its session's key (the
 * `sessions` row of its session id; no column of its own), so a row whose session was pruned counts
 * towards no agent.
 */
import type Database from "better-sqlite3";
import type { ModelUsage } from "../core/turn.js";
import { agentOfKeySql } from "./sqlite-session-sql.js";
import type { UsageLedger, UsageLine } from "./types.js";

/** The agent of `by: "agent"` lines whose session no longer exists (deleted by `herald sessions prune`). */
export const UNKNOWN_AGENT = "?";

interface Row {
  model: string;
  user?: string;
  agent?: string | null;
  prompt: number;
  completion: number;
  cached: number;
  written: number;
  reasoning: number;
  calls: number;
}

const SUMS =
  "SUM(u.prompt_tokens) AS prompt, SUM(u.completion_tokens) AS completion, SUM(u.cached_tokens) AS cached, " +
  "SUM(u.cache_write_tokens) AS written, SUM(u.reasoning_tokens) AS reasoning, SUM(u.calls) AS calls";

const AGENT = agentOfKeySql("s.key");
/** The usage rows of the period, and of one agent's sessions when `@agent` is asked for. */
const WHERE = "u.created_at >= @since AND u.created_at < @until";
const OF_AGENT = ` AND u.session_id IN (SELECT s.id FROM sessions s WHERE ${AGENT} = @agent)`;

/** What each grouping selects, groups and orders by. */
const GROUPINGS = {
  model: { select: "u.model AS model", group: "u.model", order: "prompt DESC, model" },
  user: {
    select: "u.platform || ':' || u.user_id AS user, u.model AS model",
    group: "u.platform, u.user_id, u.model",
    order: "user, prompt DESC",
  },
} as const;

type Grouping = keyof typeof GROUPINGS | "agent";

const line = (r: Row): UsageLine => ({
  model: r.model,
  ...(r.user !== undefined ? { user: r.user } : {}),
  ...(r.agent !== undefined && r.agent !== null ? { agent: r.agent } : {}),
  promptTokens: r.prompt,
  completionTokens: r.completion,
  cachedTokens: r.cached,
  cacheWriteTokens: r.written,
  reasoningTokens: r.reasoning,
  calls: r.calls,
});

export class SqliteUsageLedger implements UsageLedger {
  readonly #db: Database.Database;
  readonly #insert: Database.Statement;
  readonly #session: Database.Statement;
  readonly #turn: Database.Statement;
  /** The summary statements by grouping and whether one agent's rows are kept, prepared on first use. */
  readonly #summaries = new Map<string, Database.Statement>();
  readonly #first: Database.Statement<[], { first: number | null }>;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#insert = db.prepare(
      `INSERT OR REPLACE INTO usage (turn_id, model, session_id, user_id, platform, prompt_tokens,
         completion_tokens, cached_tokens, cache_write_tokens, reasoning_tokens, calls, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#session = db.prepare(
      `SELECT u.model AS model, ${SUMS} FROM usage u WHERE u.session_id = ? GROUP BY u.model
         ORDER BY MIN(u.created_at), u.model`,
    );
    this.#turn = db.prepare(
      `SELECT model, prompt_tokens AS prompt, completion_tokens AS completion, cached_tokens AS cached,
         cache_write_tokens AS written, reasoning_tokens AS reasoning, calls FROM usage WHERE turn_id = ?`,
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
    by: Grouping;
    agent?: string | undefined;
  }): UsageLine[] {
    const params = {
      since: options.since ?? 0,
      until: options.until ?? Number.MAX_SAFE_INTEGER,
      ...(options.agent !== undefined ? { agent: options.agent } : {}),
    };
    return (this.#summary(options.by, options.agent !== undefined).all(params) as Row[]).map(line);
  }

  /** When the oldest usage row was written (epoch ms), or undefined when there is none. */
  firstAt(): number | undefined {
    return this.#first.get()?.first ?? undefined;
  }

  #summary(by: Grouping, oneAgent: boolean): Database.Statement {
    const id = `${by}:${oneAgent}`;
    let statement = this.#summaries.get(id);
    if (!statement) {
      const where = `${WHERE}${oneAgent ? OF_AGENT : ""}`;
      // By agent: each row's session joined by its id (a primary-key lookup) for its key.
      const sql =
        by === "agent"
          ? `SELECT COALESCE(${AGENT}, '${UNKNOWN_AGENT}') AS agent, u.model AS model, ${SUMS}
               FROM usage u LEFT JOIN sessions s ON s.id = u.session_id WHERE ${where}
               GROUP BY agent, u.model ORDER BY agent = '${UNKNOWN_AGENT}', agent, prompt DESC`
          : `SELECT ${GROUPINGS[by].select}, ${SUMS} FROM usage u WHERE ${where}
               GROUP BY ${GROUPINGS[by].group} ORDER BY ${GROUPINGS[by].order}`;
      statement = this.#db.prepare(sql);
      this.#summaries.set(id, statement);
    }
    return statement;
  }
}
