import type Database from "better-sqlite3";
import { formatChat } from "../core/chat.js";
import type {
  CronTurnOrigin,
  TurnOptions,
  TurnRecord,
  TurnResume,
  TurnSource,
  TurnStatus,
} from "../core/turn.js";
import type { ChatRef, InboundMessage } from "../core/types.js";
import type { TurnJournal } from "./types.js";

interface TurnRow {
  id: string;
  session_id: string;
  session_key: string;
  chat: string;
  user_id: string;
  status: TurnStatus;
  source: TurnSource;
  input: string;
  inbound: string | null;
  extra: string | null;
  attempts: number;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  error: string | null;
}

function toTurn(row: TurnRow): TurnRecord {
  const turn: TurnRecord = {
    id: row.id,
    sessionId: row.session_id,
    sessionKey: row.session_key,
    chat: JSON.parse(row.chat) as ChatRef,
    userId: row.user_id,
    status: row.status,
    source: row.source,
    input: row.input,
    attempts: row.attempts,
    createdAt: row.created_at,
  };
  if (row.inbound !== null) turn.inbound = JSON.parse(row.inbound) as InboundMessage;
  if (row.extra !== null) Object.assign(turn, readExtra(JSON.parse(row.extra) as Record<string, unknown>));
  if (row.started_at !== null) turn.startedAt = row.started_at;
  if (row.finished_at !== null) turn.finishedAt = row.finished_at;
  if (row.error !== null) turn.error = row.error;
  return turn;
}

/**
 * The `extra` column: `{ cron, options, resume }`, or, in rows written before turns were typed, the
 * flat bag (`deliverTo`, `targetSpecs`, `subject`, `toolsets`, `model`, `cronJobId`, `runId`).
 */
function readExtra(extra: Record<string, unknown>): Pick<TurnRecord, "cron" | "options" | "resume"> {
  if ("cron" in extra || "options" in extra || "resume" in extra) {
    const out: Pick<TurnRecord, "cron" | "options" | "resume"> = {};
    if (extra["cron"]) out.cron = extra["cron"] as CronTurnOrigin;
    if (extra["options"]) out.options = extra["options"] as TurnOptions;
    if (extra["resume"]) out.resume = extra["resume"] as TurnResume;
    return out;
  }
  const out: Pick<TurnRecord, "cron" | "options"> = {};
  const toolsets = extra["toolsets"] as string[] | undefined;
  const model = extra["model"] as string | undefined;
  if (toolsets || model) out.options = { toolsets, model };
  const jobId = extra["cronJobId"];
  const runId = extra["runId"];
  if (typeof jobId === "string" && typeof runId === "string") {
    const specs = (extra["targetSpecs"] ?? {}) as Record<string, string>;
    const chats = (extra["deliverTo"] ?? []) as ChatRef[];
    out.cron = {
      jobId,
      runId,
      targets: chats.map((chat) => ({ chat, spec: specs[formatChat(chat)] ?? formatChat(chat) })),
      subject: extra["subject"] as string | undefined,
    };
  }
  return out;
}

/**
 * `TurnJournal` on the `turns` table. Status moves pending → running → done | cancelled | failed, and
 * running → pending on a stop or restart; a final status never changes again, which is how a stale
 * result (a turn cancelled, or finished by another attempt) is recognised. `attempts` counts the runs
 * that ended without a clean stop handing the turn back, so it survives the crash it counts.
 */
export class SqliteTurnJournal implements TurnJournal {
  readonly #stmt;

  constructor(db: Database.Database) {
    this.#stmt = {
      insert: db.prepare(
        `INSERT INTO turns (id, session_id, session_key, chat, user_id, status, source, input, inbound, extra,
           created_at) VALUES (@id, @sessionId, @sessionKey, @chat, @userId, 'pending', @source, @input,
           @inbound, @extra, @now)`,
      ),
      insertRunning: db.prepare(
        `INSERT INTO turns (id, session_id, session_key, chat, user_id, status, source, input, inbound, extra,
           attempts, created_at, started_at) VALUES (@id, @sessionId, @sessionKey, @chat, @userId, 'running',
           @source, @input, @inbound, @extra, 1, @now, @now)`,
      ),
      get: db.prepare<[string], TurnRow>("SELECT * FROM turns WHERE id = ?"),
      markRunning: db.prepare<[number, string]>(
        "UPDATE turns SET status = 'running', attempts = attempts + 1, started_at = ? WHERE id = ? AND status = 'pending'",
      ),
      finish: db.prepare<[string, string | null, number, string]>(
        `UPDATE turns SET status = ?, error = ?, finished_at = ?
         WHERE id = ? AND status IN ('pending', 'running')`,
      ),
      openTurns: db.prepare<[string], TurnRow>(
        `SELECT * FROM turns WHERE session_key = ? AND status IN ('pending', 'running')
         ORDER BY created_at, rowid`,
      ),
      nextOpen: db.prepare<[string], { id: string; status: TurnStatus }>(
        `SELECT id, status FROM turns WHERE session_key = ? AND status IN ('pending', 'running')
         ORDER BY created_at, rowid LIMIT 1`,
      ),
      allOpen: db.prepare<[], TurnRow>(
        "SELECT * FROM turns WHERE status IN ('pending', 'running') ORDER BY created_at, rowid",
      ),
      requeueRunning: db.prepare("UPDATE turns SET status = 'pending' WHERE status = 'running'"),
      handBack: db.prepare<[string]>(
        "UPDATE turns SET status = 'pending', attempts = MAX(attempts - 1, 0) WHERE id = ? AND status = 'running'",
      ),
      requeueCrashed: db.prepare<[], TurnRow>(
        "UPDATE turns SET status = 'pending' WHERE status = 'running' RETURNING *",
      ),
      prune: db.prepare<[number]>(
        "DELETE FROM turns WHERE status IN ('done', 'cancelled', 'failed') AND finished_at < ?",
      ),
    };
  }

  /** Journals a new turn (see the contract). Throws if `turn.id` exists already. */
  create(
    turn: Omit<TurnRecord, "status" | "attempts" | "createdAt">,
    now: number = Date.now(),
    options: { running?: boolean } = {},
  ): TurnRecord {
    const running = options.running === true;
    (running ? this.#stmt.insertRunning : this.#stmt.insert).run({
      id: turn.id,
      sessionId: turn.sessionId,
      sessionKey: turn.sessionKey,
      chat: JSON.stringify(turn.chat),
      userId: turn.userId,
      source: turn.source,
      input: turn.input,
      inbound: turn.inbound === undefined ? null : JSON.stringify(turn.inbound),
      extra:
        turn.cron || turn.options || turn.resume
          ? JSON.stringify({ cron: turn.cron, options: turn.options, resume: turn.resume })
          : null,
      now,
    });
    // Built here rather than read back: this runs on every turn's hot path.
    return running
      ? { ...turn, status: "running", attempts: 1, createdAt: now, startedAt: now }
      : { ...turn, status: "pending", attempts: 0, createdAt: now };
  }

  get(turnId: string): TurnRecord | undefined {
    const row = this.#stmt.get.get(turnId);
    return row && toTurn(row);
  }

  markRunning(turnId: string, now: number = Date.now()): boolean {
    return this.#stmt.markRunning.run(now, turnId).changes === 1;
  }

  /** False when the turn is unknown or already final: the caller's result is stale and must be dropped. */
  finish(
    turnId: string,
    status: "done" | "cancelled" | "failed",
    error?: string,
    now: number = Date.now(),
  ): boolean {
    return this.#stmt.finish.run(status, error ?? null, now, turnId).changes === 1;
  }

  openTurns(sessionKey: string): TurnRecord[] {
    return this.#stmt.openTurns.all(sessionKey).map(toTurn);
  }

  nextOpen(sessionKey: string): { id: string; status: TurnStatus } | undefined {
    return this.#stmt.nextOpen.get(sessionKey);
  }

  allOpen(): TurnRecord[] {
    return this.#stmt.allOpen.all().map(toTurn);
  }

  requeueRunning(): number {
    return this.#stmt.requeueRunning.run().changes;
  }

  requeueCrashed(): TurnRecord[] {
    return this.#stmt.requeueCrashed.all().map(toTurn);
  }

  handBack(turnIds: readonly string[]): number {
    let changes = 0;
    for (const id of turnIds) changes += this.#stmt.handBack.run(id).changes;
    return changes;
  }

  /** Not in the contract: deletes final turns that finished before `beforeMs`; returns how many. */
  prune(beforeMs: number): number {
    return this.#stmt.prune.run(beforeMs).changes;
  }
}
