/**
 * Versioned schema of `state.db`. The version lives in `PRAGMA user_version`; each migration moves the
 * schema one version up and all pending ones run in one transaction, so a crash mid-upgrade leaves the
 * old schema intact. Never edit a released migration: append a new one.
 */
import type Database from "better-sqlite3";
import { HeraldError } from "../core/errors.js";

/** One schema step. `version` is the `user_version` the database has after it ran. */
export interface Migration {
  version: number;
  description: string;
  up: (db: Database.Database) => void;
}

const v1 = `
CREATE TABLE sessions (
  id             TEXT PRIMARY KEY,
  key            TEXT NOT NULL,
  platform       TEXT NOT NULL,
  chat_id        TEXT NOT NULL,
  thread_id      TEXT,
  chat_type      TEXT NOT NULL,
  user_id        TEXT NOT NULL,
  created_at     INTEGER NOT NULL,
  last_active_at INTEGER NOT NULL,
  ended_at       INTEGER,
  end_reason     TEXT,
  title          TEXT,
  message_count  INTEGER NOT NULL DEFAULT 0
);
-- At most one active session per key.
CREATE UNIQUE INDEX sessions_active_key ON sessions(key) WHERE ended_at IS NULL;
CREATE INDEX sessions_key ON sessions(key);
CREATE INDEX sessions_last_active ON sessions(last_active_at);

CREATE TABLE messages (
  id           INTEGER PRIMARY KEY,
  session_id   TEXT NOT NULL,
  seq          INTEGER NOT NULL,
  role         TEXT NOT NULL,
  content      TEXT,
  tool_calls   TEXT,
  tool_call_id TEXT,
  name         TEXT,
  created_at   INTEGER NOT NULL,
  turn_id      TEXT,
  compacted    INTEGER NOT NULL DEFAULT 0,
  UNIQUE (session_id, seq)
);

-- External-content FTS over message text; triggers keep it in sync with inserts and deletes.
CREATE VIRTUAL TABLE messages_fts USING fts5(
  content, content='messages', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
);
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages WHEN new.content IS NOT NULL BEGIN
  INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages WHEN old.content IS NOT NULL BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, content)
    SELECT 'delete', old.id, old.content WHERE old.content IS NOT NULL;
  INSERT INTO messages_fts(rowid, content) SELECT new.id, new.content WHERE new.content IS NOT NULL;
END;

CREATE TABLE compactions (
  session_id TEXT NOT NULL,
  upto_seq   INTEGER NOT NULL,
  summary    TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (session_id, upto_seq)
) WITHOUT ROWID;

CREATE TABLE inbound (
  platform    TEXT NOT NULL,
  message_id  TEXT NOT NULL,
  payload     TEXT NOT NULL,
  status      TEXT NOT NULL CHECK (status IN ('received', 'handled')),
  outcome     TEXT,
  received_at INTEGER NOT NULL,
  PRIMARY KEY (platform, message_id)
);
CREATE INDEX inbound_unhandled ON inbound(received_at) WHERE status = 'received';
CREATE INDEX inbound_received_at ON inbound(received_at);

CREATE TABLE turns (
  id          TEXT PRIMARY KEY,
  session_id  TEXT NOT NULL,
  session_key TEXT NOT NULL,
  chat        TEXT NOT NULL,
  user_id     TEXT NOT NULL,
  status      TEXT NOT NULL CHECK (status IN ('pending', 'running', 'done', 'cancelled', 'failed')),
  source      TEXT NOT NULL,
  input       TEXT NOT NULL,
  inbound     TEXT,
  extra       TEXT,
  attempts    INTEGER NOT NULL DEFAULT 0,
  created_at  INTEGER NOT NULL,
  started_at  INTEGER,
  finished_at INTEGER,
  error       TEXT
);
CREATE INDEX turns_open ON turns(session_key, created_at) WHERE status IN ('pending', 'running');
CREATE INDEX turns_finished_at ON turns(finished_at) WHERE finished_at IS NOT NULL;

CREATE TABLE outbox (
  id              TEXT PRIMARY KEY,
  chat            TEXT NOT NULL,
  message         TEXT NOT NULL,
  turn_id         TEXT,
  chunks_sent     INTEGER NOT NULL DEFAULT 0,
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  created_at      INTEGER NOT NULL,
  last_error      TEXT,
  status          TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed'))
);
CREATE INDEX outbox_pending ON outbox(created_at) WHERE status = 'pending';

CREATE TABLE pairing_codes (
  code_hash  TEXT PRIMARY KEY,
  platform   TEXT NOT NULL,
  user_id    TEXT NOT NULL,
  user_name  TEXT,
  chat_id    TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX pairing_codes_user ON pairing_codes(platform, user_id);

CREATE TABLE pairing_approved (
  platform    TEXT NOT NULL,
  user_id     TEXT NOT NULL,
  approved_at INTEGER NOT NULL,
  PRIMARY KEY (platform, user_id)
) WITHOUT ROWID;

CREATE TABLE kv (
  namespace TEXT NOT NULL,
  key       TEXT NOT NULL,
  value     TEXT NOT NULL,
  PRIMARY KEY (namespace, key)
) WITHOUT ROWID;
`;

/** v2: cron jobs, their runs, and the change counter a running gateway polls (`scheduler/`). */
const v2 = `
CREATE TABLE cron_jobs (
  id               TEXT PRIMARY KEY,
  spec             TEXT NOT NULL,
  paused           INTEGER NOT NULL DEFAULT 0,
  next_run_at      INTEGER,
  last_tick_at     INTEGER,
  failures         INTEGER NOT NULL DEFAULT 0,
  skip_ticks       INTEGER NOT NULL DEFAULT 0,
  failure_reported INTEGER NOT NULL DEFAULT 0,
  reported_targets TEXT NOT NULL DEFAULT '[]',
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL
);

CREATE TABLE cron_runs (
  id          TEXT PRIMARY KEY,
  job_id      TEXT NOT NULL,
  tick_at     INTEGER NOT NULL,
  kind        TEXT NOT NULL CHECK (kind IN ('scheduled', 'manual')),
  status      TEXT NOT NULL
              CHECK (status IN ('queued', 'running', 'ok', 'silent', 'failed', 'timeout', 'cancelled')),
  created_at  INTEGER NOT NULL,
  started_at  INTEGER,
  finished_at INTEGER,
  session_key TEXT,
  output      TEXT,
  error       TEXT
);
CREATE INDEX cron_runs_job ON cron_runs(job_id, created_at);
CREATE INDEX cron_runs_open ON cron_runs(created_at) WHERE status IN ('queued', 'running');

-- Bumped by every change a running gateway must notice when another process makes it (the CLI adds,
-- edits or removes a job, or queues a run); the gateway polls it.
CREATE TABLE cron_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO cron_meta (key, value) VALUES ('version', 0);
CREATE TRIGGER cron_jobs_insert AFTER INSERT ON cron_jobs BEGIN
  UPDATE cron_meta SET value = value + 1 WHERE key = 'version';
END;
CREATE TRIGGER cron_jobs_delete AFTER DELETE ON cron_jobs BEGIN
  UPDATE cron_meta SET value = value + 1 WHERE key = 'version';
END;
CREATE TRIGGER cron_jobs_update AFTER UPDATE OF spec, paused ON cron_jobs BEGIN
  UPDATE cron_meta SET value = value + 1 WHERE key = 'version';
END;
CREATE TRIGGER cron_runs_queued AFTER INSERT ON cron_runs WHEN new.status = 'queued' BEGIN
  UPDATE cron_meta SET value = value + 1 WHERE key = 'version';
END;
`;

/**
 * v3: messages are indexed for search in bulk, not by a trigger per insert (at hundreds of turns a
 * second the per-row index flushes were a tenth of the gateway's CPU). `fts_progress.indexed_upto` is
 * the highest message id in the index; the store indexes what lies above it before every search and
 * whenever a few hundred messages wait. Deletes and edits touch the index only for rows it holds.
 */
const v3 = `
CREATE TABLE fts_progress (
  id           INTEGER PRIMARY KEY CHECK (id = 1),
  indexed_upto INTEGER NOT NULL
);
INSERT INTO fts_progress (id, indexed_upto) VALUES (1, (SELECT COALESCE(MAX(id), 0) FROM messages));
DROP TRIGGER messages_fts_insert;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
WHEN old.content IS NOT NULL AND old.id <= (SELECT indexed_upto FROM fts_progress) BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages
WHEN old.id <= (SELECT indexed_upto FROM fts_progress) BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, content)
    SELECT 'delete', old.id, old.content WHERE old.content IS NOT NULL;
  INSERT INTO messages_fts(rowid, content) SELECT new.id, new.content WHERE new.content IS NOT NULL;
END;
`;

/**
 * v4: token usage, one row per turn and model that answered in it (compression and fallbacks
 * included), so `/usage`, `herald sessions show` and the owner's `/usage all` sum what was spent.
 */
const v4 = `
CREATE TABLE usage (
  turn_id           TEXT NOT NULL,
  model             TEXT NOT NULL,
  session_id        TEXT NOT NULL,
  user_id           TEXT NOT NULL,
  platform          TEXT NOT NULL,
  prompt_tokens     INTEGER NOT NULL,
  completion_tokens INTEGER NOT NULL,
  cached_tokens     INTEGER NOT NULL,
  calls             INTEGER NOT NULL,
  created_at        INTEGER NOT NULL,
  PRIMARY KEY (turn_id, model)
) WITHOUT ROWID;
CREATE INDEX usage_session ON usage(session_id);
CREATE INDEX usage_created ON usage(created_at);
`;

/** v5: responses of the API server's `/v1/responses` kept for `previous_response_id` and GET, until they expire. */
const v5 = `
CREATE TABLE api_responses (
  id         TEXT PRIMARY KEY,
  chat_id    TEXT NOT NULL,
  user_id    TEXT NOT NULL,
  body       TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX api_responses_expires ON api_responses(expires_at);
`;

/** v6: cache writes and reasoning tokens per usage row (providers that report them; 0 before). */
const v6 = `
ALTER TABLE usage ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;
`;

/**
 * v7: each workspace's latest hand-over generation on Redis (its number and manifest: path → file hash,
 * folder or link), for workers that run a session's turns one after the other.
 */
const v7 = `
CREATE TABLE workspace_generations (
  workspace   TEXT PRIMARY KEY,
  generation  INTEGER NOT NULL,
  manifest    TEXT NOT NULL,
  total_bytes INTEGER NOT NULL,
  pushed_by   TEXT NOT NULL,
  updated_at  INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX workspace_generations_updated ON workspace_generations(updated_at);
`;

/**
 * v8: each MCP server's last `tools/list` answer (names, descriptions, input schemas as JSON), with a hash
 * of what defines the server (never a secret's value): a server whose entry matches is not started
 * until its first call.
 */
const v8 = `
CREATE TABLE mcp_tool_cache (
  server     TEXT PRIMARY KEY,
  definition TEXT NOT NULL,
  tools      TEXT NOT NULL,
  listed_at  INTEGER NOT NULL
) WITHOUT ROWID;
`;

/** Every migration, in order. The last one's version is the schema this build writes. */
export const migrations: readonly Migration[] = [
  { version: 1, description: "initial schema", up: (db) => db.exec(v1) },
  { version: 2, description: "cron jobs and runs", up: (db) => db.exec(v2) },
  { version: 3, description: "search index filled in bulk", up: (db) => db.exec(v3) },
  { version: 4, description: "token usage per turn and model", up: (db) => db.exec(v4) },
  { version: 5, description: "stored API responses", up: (db) => db.exec(v5) },
  { version: 6, description: "cache writes and reasoning tokens in usage", up: (db) => db.exec(v6) },
  { version: 7, description: "workspace hand-over generations", up: (db) => db.exec(v7) },
  { version: 8, description: "cached MCP tool lists", up: (db) => db.exec(v8) },
];

/** The schema version this build writes. */
export const LATEST_SCHEMA_VERSION = migrations[migrations.length - 1]?.version ?? 0;

/** The database's schema version (`PRAGMA user_version`; 0 for a new file). */
export function schemaVersion(db: Database.Database): number {
  return db.pragma("user_version", { simple: true }) as number;
}

/**
 * Brings `db` to the latest schema. Throws a `state_error` HeraldError, changing nothing, when the file
 * was written by a newer Herald; a failing migration rolls back every step of this run.
 * @param list the migrations to apply (tests pass their own). @defaultValue `migrations`
 * @returns the versions applied now, in order (empty when already current).
 */
export function migrate(db: Database.Database, list: readonly Migration[] = migrations): number[] {
  const latest = list[list.length - 1]?.version ?? 0;
  // A current file needs no lock (the version only grows): opening it never waits for a busy writer.
  if (schemaVersion(db) === latest) return [];
  // Read the version under the write lock, so two processes opening a new file never both migrate it.
  return db
    .transaction(() => {
      const current = schemaVersion(db);
      if (current > latest) {
        throw new HeraldError(
          `${db.name} has schema version ${current}, but this Herald knows versions up to ${latest}: it ` +
            "was written by a newer Herald. Upgrade Herald, or point HERALD_HOME at another directory.",
          { code: "state_error" },
        );
      }
      const pending = list.filter((m) => m.version > current);
      for (const m of pending) {
        m.up(db);
        // user_version lives in the file header, which is written inside this transaction.
        db.pragma(`user_version = ${Math.trunc(m.version)}`);
      }
      return pending.map((m) => m.version);
    })
    .immediate();
}
