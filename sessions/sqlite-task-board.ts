/**
 * The shared task board in `state.db` (table `task_board`, created on first open). Every change is one
 * SQL statement on the gateway's connection, so a claim is atomic however many workers ask at once:
 * `UPDATE … WHERE id = (the oldest claimable) AND <still claimable> RETURNING *`. A claim is claimable
 * again when its lease ran out or its turn died (the journal says failed or cancelled) without
 * completing it; a turn on a killed worker holds its claims until they expire (it may still run again
 * elsewhere), and a turn that ended well keeps them until then too.
 */
import type Database from "better-sqlite3";
import { HeraldError } from "../core/errors.js";

/** A task's states: `done` and `failed` are final. */
export type TaskState = "todo" | "claimed" | "done" | "failed";

/** A task of the board. */
export interface TaskRecord {
  id: number;
  title: string;
  details?: string | undefined;
  state: TaskState;
  owner?: string | undefined;
  result?: string | undefined;
  claimTurn?: string | undefined;
  claimExpiresAt?: number | undefined;
  createdBy?: string | undefined;
  createdAt: number;
  updatedAt: number;
}

/** Who changes the board. */
export interface TaskActor {
  owner: string;
  turnId?: string | undefined;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS task_board (
  id               INTEGER PRIMARY KEY,
  title            TEXT NOT NULL,
  details          TEXT,
  state            TEXT NOT NULL CHECK (state IN ('todo', 'claimed', 'done', 'failed')),
  owner            TEXT,
  result           TEXT,
  claim_turn       TEXT,
  claim_expires_at INTEGER,
  created_by       TEXT,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS task_board_open ON task_board(state, id) WHERE state IN ('todo', 'claimed');
`;

interface Row {
  id: number;
  title: string;
  details: string | null;
  state: TaskState;
  owner: string | null;
  result: string | null;
  claim_turn: string | null;
  claim_expires_at: number | null;
  created_by: string | null;
  created_at: number;
  updated_at: number;
}

// A claim is free again when its lease ran out or the turn that holds it died (the journal says failed
// or cancelled). A turn that ended well keeps its claims until they expire (it may report later).
// EXISTS by primary key: one lookup per claimed row, not a scan of the journal.
const CLAIMABLE = `(state = 'todo' OR (state = 'claimed' AND (claim_expires_at < @now
  OR EXISTS (SELECT 1 FROM turns WHERE turns.id = claim_turn AND turns.status IN ('failed', 'cancelled')))))`;

/** The board on one SQLite connection. */
export class SqliteTaskBoard {
  readonly #db: Database.Database;
  readonly #claimTtlMs: number;
  readonly #hasTurns: boolean;

  /**
   * @param claimTtlMs how long a claim holds without a renewal (any board call of the claiming turn
   * renews its claims). @defaultValue 900000 (15 minutes)
   */
  constructor(db: Database.Database, options: { claimTtlMs?: number | undefined } = {}) {
    this.#db = db;
    this.#claimTtlMs = options.claimTtlMs ?? 900_000;
    db.exec(SCHEMA);
    this.#hasTurns = Boolean(
      db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'turns'").get(),
    );
  }

  /** Adds a task in state `todo`. */
  create(title: string, details: string | undefined, actor: TaskActor, now = Date.now()): TaskRecord {
    const row = this.#db
      .prepare(
        `INSERT INTO task_board (title, details, state, created_by, created_at, updated_at)
         VALUES (?, ?, 'todo', ?, ?, ?) RETURNING *`,
      )
      .get(title.trim(), details?.trim() || null, actor.owner, now, now) as Row;
    return toRecord(row);
  }

  /** Claims task `id` or the oldest claimable one; undefined when none is free (or `id` is not). */
  claim(actor: TaskActor, id?: number, now = Date.now()): TaskRecord | undefined {
    this.#renew(actor, now);
    const claimable = this.#hasTurns
      ? CLAIMABLE
      : "(state = 'todo' OR (state = 'claimed' AND claim_expires_at < @now))";
    const pick =
      id === undefined
        ? // The explicit state test lets SQLite use the partial index of open tasks (done ones are skipped).
          `SELECT id FROM task_board WHERE state IN ('todo', 'claimed') AND ${claimable} ORDER BY id LIMIT 1`
        : `SELECT id FROM task_board WHERE id = @id AND ${claimable}`;
    const row = this.#db
      .prepare(
        `UPDATE task_board SET state = 'claimed', owner = @owner, claim_turn = @turn,
           claim_expires_at = @expires, updated_at = @now
         WHERE id = (${pick}) AND ${claimable} RETURNING *`,
      )
      .get({
        id: id ?? null,
        owner: actor.owner,
        turn: actor.turnId ?? null,
        now,
        expires: now + this.#claimTtlMs,
      }) as Row | undefined;
    return row ? toRecord(row) : undefined;
  }

  /** Changes a task's text or result; rejects with `not_found` for an unknown id. */
  update(
    id: number,
    change: { title?: string | undefined; details?: string | undefined; result?: string | undefined },
    actor: TaskActor,
    now = Date.now(),
  ): TaskRecord {
    this.#renew(actor, now);
    const row = this.#db
      .prepare(
        `UPDATE task_board SET title = coalesce(@title, title), details = coalesce(@details, details),
           result = coalesce(@result, result), updated_at = @now WHERE id = @id RETURNING *`,
      )
      .get({
        id,
        title: change.title?.trim() || null,
        details: change.details ?? null,
        result: change.result ?? null,
        now,
      }) as Row | undefined;
    if (!row) throw notFound(id);
    return toRecord(row);
  }

  /**
   * Ends a task as `done` or `failed`. Rejects with `invalid_input` when another turn holds its claim
   * (a claim that is still valid) or when it is final already.
   */
  complete(
    id: number,
    outcome: "done" | "failed",
    result: string,
    actor: TaskActor,
    now = Date.now(),
  ): TaskRecord {
    const current = this.get(id);
    if (!current) throw notFound(id);
    if (current.state === "done" || current.state === "failed")
      throw new HeraldError(`Task ${id} is ${current.state} already.`, { code: "invalid_input" });
    const heldByOther =
      current.state === "claimed" &&
      current.claimTurn !== undefined &&
      current.claimTurn !== actor.turnId &&
      (current.claimExpiresAt ?? 0) >= now;
    if (heldByOther)
      throw new HeraldError(`Task ${id} is claimed by ${current.owner ?? "another turn"}; claim it first.`, {
        code: "invalid_input",
      });
    const row = this.#db
      .prepare(
        `UPDATE task_board SET state = @outcome, result = @result, owner = coalesce(owner, @owner),
           claim_expires_at = NULL, updated_at = @now WHERE id = @id RETURNING *`,
      )
      .get({ id, outcome, result, owner: actor.owner, now }) as Row;
    return toRecord(row);
  }

  /** Tasks, oldest first, optionally of one state. */
  list(filter: { state?: TaskState | undefined; limit?: number | undefined } = {}): TaskRecord[] {
    const rows = this.#db
      .prepare(`SELECT * FROM task_board WHERE (@state IS NULL OR state = @state) ORDER BY id LIMIT @limit`)
      .all({ state: filter.state ?? null, limit: filter.limit ?? 200 }) as Row[];
    return rows.map(toRecord);
  }

  get(id: number): TaskRecord | undefined {
    const row = this.#db.prepare("SELECT * FROM task_board WHERE id = ?").get(id) as Row | undefined;
    return row ? toRecord(row) : undefined;
  }

  /** Gives back the claims of `turnId` it did not complete (its turn died). Returns how many. */
  release(turnId: string, now = Date.now()): number {
    return this.#db
      .prepare(
        `UPDATE task_board SET state = 'todo', owner = NULL, claim_turn = NULL, claim_expires_at = NULL,
           updated_at = ? WHERE state = 'claimed' AND claim_turn = ?`,
      )
      .run(now, turnId).changes;
  }

  /** Extends the claims of the actor's turn (it is alive: it called the board). */
  #renew(actor: TaskActor, now: number): void {
    if (!actor.turnId) return;
    this.#db
      .prepare(
        "UPDATE task_board SET claim_expires_at = ? WHERE state = 'claimed' AND claim_turn = ? AND claim_expires_at >= ?",
      )
      .run(now + this.#claimTtlMs, actor.turnId, now);
  }
}

function notFound(id: number): HeraldError {
  return new HeraldError(`There is no task ${id} on the board; list the board to see the ids.`, {
    code: "not_found",
  });
}

function toRecord(row: Row): TaskRecord {
  return {
    id: row.id,
    title: row.title,
    ...(row.details ? { details: row.details } : {}),
    state: row.state,
    ...(row.owner ? { owner: row.owner } : {}),
    ...(row.result ? { result: row.result } : {}),
    ...(row.claim_turn ? { claimTurn: row.claim_turn } : {}),
    ...(row.claim_expires_at !== null && row.state === "claimed"
      ? { claimExpiresAt: row.claim_expires_at }
      : {}),
    ...(row.created_by ? { createdBy: row.created_by } : {}),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** One line of a task for lists: `#3 [claimed by worker-a] write the report`. */
export function formatTaskLine(task: TaskRecord): string {
  const who = task.state === "claimed" && task.owner ? ` by ${task.owner}` : "";
  return `#${task.id} [${task.state}${who}] ${task.title}`;
}

/** A task in full, for `show`. */
export function formatTask(task: TaskRecord): string {
  return [
    formatTaskLine(task),
    ...(task.details ? [`details: ${task.details}`] : []),
    ...(task.owner ? [`owner: ${task.owner}`] : []),
    ...(task.claimExpiresAt ? [`claim until: ${new Date(task.claimExpiresAt).toISOString()}`] : []),
    ...(task.result ? [`result: ${task.result}`] : []),
    `created: ${new Date(task.createdAt).toISOString()}${task.createdBy ? ` by ${task.createdBy}` : ""}`,
    `updated: ${new Date(task.updatedAt).toISOString()}`,
  ].join("\n");
}
