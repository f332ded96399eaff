/**
 * The children of `delegate_task` calls in `state.db` (table `delegate_children`, created on first
 * open): one row per task with its job, state and result. A child's first result wins; later ones (a
 * job run again after its worker died) find the row final and change nothing.
 */
import type Database from "better-sqlite3";
import type { TurnJob } from "../../core/turn.js";
import type { DelegateChild } from "./state.js";

/** A child as stored. */
export interface ChildRecord extends DelegateChild {
  groupId: string;
  sessionKey: string;
  parentTurnId: string;
  job: TurnJob;
  maxParallel: number;
  timeoutMs: number;
  createdAt: number;
  startedAt?: number | undefined;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS delegate_children (
  id           TEXT PRIMARY KEY,
  group_id     TEXT NOT NULL,
  idx          INTEGER NOT NULL,
  session_key  TEXT NOT NULL,
  parent_turn  TEXT NOT NULL,
  goal         TEXT NOT NULL,
  job          TEXT NOT NULL,
  state        TEXT NOT NULL CHECK (state IN ('waiting', 'running', 'done', 'failed', 'cancelled')),
  max_parallel INTEGER NOT NULL,
  timeout_ms   INTEGER NOT NULL,
  summary      TEXT,
  files        TEXT,
  model        TEXT,
  created_at   INTEGER NOT NULL,
  started_at   INTEGER,
  finished_at  INTEGER
);
CREATE INDEX IF NOT EXISTS delegate_children_group ON delegate_children(group_id, idx);
CREATE INDEX IF NOT EXISTS delegate_children_open ON delegate_children(session_key)
  WHERE state IN ('waiting', 'running');
CREATE INDEX IF NOT EXISTS delegate_children_parent ON delegate_children(parent_turn)
  WHERE state IN ('waiting', 'running');
`;

interface Row {
  id: string;
  group_id: string;
  idx: number;
  session_key: string;
  parent_turn: string;
  goal: string;
  job: string;
  state: DelegateChild["state"];
  max_parallel: number;
  timeout_ms: number;
  summary: string | null;
  files: string | null;
  model: string | null;
  created_at: number;
  started_at: number | null;
}

/** Whether a child's state is final. */
export const isFinal = (state: DelegateChild["state"]) =>
  state === "done" || state === "failed" || state === "cancelled";

/** The children table on one connection. */
export class SqliteDelegations {
  readonly #db: Database.Database;
  /**
   * Statements by SQL, prepared once: the runner asks after a turn's children at every turn's end, so a
   * gateway that never delegates would otherwise compile the same SELECTs for each message.
   */
  readonly #statements = new Map<string, Database.Statement>();

  constructor(db: Database.Database) {
    this.#db = db;
    db.exec(SCHEMA);
  }

  #prepare(sql: string): Database.Statement {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /** Adds a group's children (all in state `waiting`). */
  insert(children: readonly Omit<ChildRecord, "state">[]): void {
    const insert = this.#prepare(
      `INSERT OR IGNORE INTO delegate_children (id, group_id, idx, session_key, parent_turn, goal, job, state,
         max_parallel, timeout_ms, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'waiting', ?, ?, ?)`,
    );
    for (const c of children)
      insert.run(
        c.id,
        c.groupId,
        c.index,
        c.sessionKey,
        c.parentTurnId,
        c.goal,
        JSON.stringify(c.job),
        c.maxParallel,
        c.timeoutMs,
        c.createdAt,
      );
  }

  group(groupId: string): ChildRecord[] {
    const rows = this.#prepare("SELECT * FROM delegate_children WHERE group_id = ? ORDER BY idx").all(
      groupId,
    ) as Row[];
    return rows.map(toRecord);
  }

  get(id: string): ChildRecord | undefined {
    const row = this.#prepare("SELECT * FROM delegate_children WHERE id = ?").get(id) as Row | undefined;
    return row ? toRecord(row) : undefined;
  }

  /** Open children (waiting or running), of one session key or all. */
  open(sessionKey?: string): ChildRecord[] {
    // Two statements: the session's uses the partial index (a /stop looks up only its own).
    const rows = (
      sessionKey === undefined
        ? this.#prepare(
            "SELECT * FROM delegate_children WHERE state IN ('waiting', 'running') ORDER BY group_id, idx",
          ).all()
        : this.#prepare(
            `SELECT * FROM delegate_children WHERE session_key = ? AND state IN ('waiting', 'running')
               ORDER BY group_id, idx`,
          ).all(sessionKey)
    ) as Row[];
    return rows.map(toRecord);
  }

  /** Open children of a parent turn. */
  openOf(parentTurnId: string): ChildRecord[] {
    const rows = this.#prepare(
      "SELECT * FROM delegate_children WHERE parent_turn = ? AND state IN ('waiting', 'running') ORDER BY idx",
    ).all(parentTurnId) as Row[];
    return rows.map(toRecord);
  }

  /** Marks a waiting child running; false when it was not waiting. */
  markRunning(id: string, now: number): boolean {
    return (
      this.#prepare(
        "UPDATE delegate_children SET state = 'running', started_at = ? WHERE id = ? AND state = 'waiting'",
      ).run(now, id).changes > 0
    );
  }

  /** Ends an open child; false when it was final already (the first result wins). */
  finish(
    id: string,
    state: "done" | "failed" | "cancelled",
    result: { summary: string; files?: DelegateChild["files"]; model?: string | undefined },
    now: number,
  ): boolean {
    return (
      this.#prepare(
        `UPDATE delegate_children SET state = ?, summary = ?, files = ?, model = ?, finished_at = ?
           WHERE id = ? AND state IN ('waiting', 'running')`,
      ).run(
        state,
        result.summary,
        result.files?.length ? JSON.stringify(result.files) : null,
        result.model ?? null,
        now,
        id,
      ).changes > 0
    );
  }
}

function toRecord(row: Row): ChildRecord {
  return {
    id: row.id,
    groupId: row.group_id,
    index: row.idx,
    sessionKey: row.session_key,
    parentTurnId: row.parent_turn,
    goal: row.goal,
    job: JSON.parse(row.job) as TurnJob,
    state: row.state,
    maxParallel: row.max_parallel,
    timeoutMs: row.timeout_ms,
    ...(row.summary !== null ? { summary: row.summary } : {}),
    ...(row.files ? { files: JSON.parse(row.files) as DelegateChild["files"] } : {}),
    ...(row.model ? { model: row.model } : {}),
    createdAt: row.created_at,
    ...(row.started_at !== null ? { startedAt: row.started_at } : {}),
  };
}
