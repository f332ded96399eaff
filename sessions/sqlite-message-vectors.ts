/**
 * Message vectors for recall by meaning, beside the messages in `state.db`.
 *
 * - `message_vectors` holds one vector per embedded message (float32 BLOB, unit length) and the model
 *   that made it, `message_vector_bits` its sign bits and session (what the in-memory index loads); a
 *   search uses only the current model's vectors.
 * - `embedding_backlog` holds the messages waiting to be embedded, with their attempts and when to try
 *   again. It is filled in the background from `embedding_state.queued_upto` (the highest message id
 *   looked at), so a crash loses nothing: what was queued stays queued, what was not is still above the
 *   mark. A new model (or dimension count) sets the mark back to 0 and everything is embedded again.
 * - Deleting a message (`/undo`, prune) deletes its vector and backlog row (triggers); an edited
 *   message is queued again.
 *
 * The tables are this feature's own (created if missing, like the task board's), so a state file
 * that never had an embeddings endpoint has none of them. A search scans the sign bits in memory
 * (`BinaryVectorIndex`) and ranks a pool of candidates exactly by cosine; the caller's scope (user, key
 * prefix, excluded session) is applied to the scan and again in SQL to what it returns.
 */
import type Database from "better-sqlite3";
import type { SearchHit, SearchOptions } from "./types.js";
import { BinaryVectorIndex, signBits } from "./vector-index.js";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS embedding_models (
  id         INTEGER PRIMARY KEY,
  name       TEXT NOT NULL UNIQUE,
  dimensions INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS embedding_state (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  model_id    INTEGER NOT NULL,
  queued_upto INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS embedding_backlog (
  message_id      INTEGER PRIMARY KEY,
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL DEFAULT 0,
  last_error      TEXT
);
CREATE TABLE IF NOT EXISTS message_vectors (
  message_id INTEGER PRIMARY KEY,
  model_id   INTEGER NOT NULL,
  vector     BLOB NOT NULL
);
-- The sign bits apart from the vectors: loading them at start reads this narrow table only.
CREATE TABLE IF NOT EXISTS message_vector_bits (
  message_id INTEGER PRIMARY KEY,
  model_id   INTEGER NOT NULL,
  session_id TEXT NOT NULL,
  bits       BLOB NOT NULL
);
CREATE TRIGGER IF NOT EXISTS message_vectors_delete AFTER DELETE ON messages BEGIN
  DELETE FROM message_vectors WHERE message_id = old.id;
  DELETE FROM message_vector_bits WHERE message_id = old.id;
  DELETE FROM embedding_backlog WHERE message_id = old.id;
END;
CREATE TRIGGER IF NOT EXISTS message_vectors_update AFTER UPDATE OF content ON messages
WHEN old.id <= (SELECT queued_upto FROM embedding_state) AND new.role IN ('user', 'assistant')
  AND new.content IS NOT NULL BEGIN
  INSERT OR REPLACE INTO embedding_backlog (message_id) VALUES (new.id);
END;
`;

/** A message waiting for its vector. */
export interface PendingMessage {
  messageId: number;
  sessionId: string;
  text: string;
  attempts: number;
}

/** Options of `SqliteMessageVectors`. */
export interface MessageVectorsOptions {
  /** The embedding model's name as the endpoint knows it. */
  model: string;
  /** Its vectors' length. */
  dimensions: number;
  /** A message's text is cut to this many characters before it is embedded. @defaultValue 4000 */
  maxChars?: number | undefined;
}

/** A recall hit: a search hit with its cosine similarity to the query. */
export interface VectorHit extends SearchHit {
  similarity: number;
}

interface CandidateRow {
  messageId: number;
  vector: Buffer;
  sessionId: string;
  sessionKey: string;
  seq: number;
  role: SearchHit["role"];
  content: string;
  createdAt: number;
}

/** Vectors, backlog and the in-memory index over them, on the gateway's connection. */
export class SqliteMessageVectors {
  readonly #db: Database.Database;
  readonly #dimensions: number;
  readonly #maxChars: number;
  readonly #modelId: number;
  readonly #index: BinaryVectorIndex;
  #loaded: Promise<void> | undefined;
  readonly #stmt;

  constructor(db: Database.Database, options: MessageVectorsOptions) {
    this.#db = db;
    this.#dimensions = options.dimensions;
    this.#maxChars = options.maxChars ?? 4000;
    this.#index = new BinaryVectorIndex(options.dimensions);
    db.exec(SCHEMA);
    this.#modelId = this.#selectModel(options.model, options.dimensions);
    this.#stmt = prepare(db);
  }

  /** The model's row; a model other than the last one used queues every message again. */
  #selectModel(name: string, dimensions: number): number {
    const key = `${name}#${dimensions}`;
    return this.#db
      .transaction(() => {
        this.#db
          .prepare("INSERT OR IGNORE INTO embedding_models (name, dimensions) VALUES (?, ?)")
          .run(key, dimensions);
        const { id } = this.#db.prepare("SELECT id FROM embedding_models WHERE name = ?").get(key) as {
          id: number;
        };
        const current = this.#db.prepare("SELECT model_id FROM embedding_state").get() as
          | { model_id: number }
          | undefined;
        if (!current) this.#db.prepare("INSERT INTO embedding_state VALUES (1, ?, 0)").run(id);
        else if (current.model_id !== id) {
          this.#db.prepare("UPDATE embedding_state SET model_id = ?, queued_upto = 0").run(id);
          this.#db.exec("DELETE FROM embedding_backlog");
        }
        return id;
      })
      .immediate();
  }

  /**
   * Queues the messages above the mark that have text to embed (user and assistant messages), at most
   * `limit` messages looked at. Returns how many it queued and whether it moved the mark (false: every
   * message is queued or embedded). Call inside a transaction of the state.
   */
  fillBacklog(limit = 2000, now = Date.now()): { queued: number; advanced: boolean } {
    this.#stmt.clampMark.run();
    const from = this.#stmt.mark.get()!.upto;
    const end = this.#stmt.stepEnd.get(from, limit)!.end;
    if (end === null) return { queued: 0, advanced: false };
    const queued = this.#stmt.queueRange.run({ from, end, model: this.#modelId, now });
    this.#stmt.setMark.run(end);
    return { queued: Number(queued.changes), advanced: true };
  }

  /** Up to `limit` queued messages due at `now`, oldest first, their text cut to the budget. */
  due(limit: number, now = Date.now()): PendingMessage[] {
    return this.#stmt.due.all(now, limit).map((row) => ({
      messageId: row.messageId,
      sessionId: row.sessionId,
      text: row.text.slice(0, this.#maxChars),
      attempts: row.attempts,
    }));
  }

  /** Messages waiting: queued, plus not yet looked at. */
  pending(): number {
    const queued = this.#stmt.countBacklog.get()!.n;
    const unseen = this.#stmt.countUnseen.get()!.n;
    return queued + unseen;
  }

  /** Stores vectors (unit length, of the model's dimensions) and takes their messages off the backlog. */
  store(items: readonly { messageId: number; sessionId: string; vector: Float32Array }[]): void {
    for (const item of items) {
      const bits = signBits(item.vector);
      this.#stmt.upsert.run(
        item.messageId,
        this.#modelId,
        Buffer.from(item.vector.buffer, item.vector.byteOffset, item.vector.byteLength),
      );
      this.#stmt.upsertBits.run(
        item.messageId,
        this.#modelId,
        item.sessionId,
        Buffer.from(bits.buffer, bits.byteOffset, bits.byteLength),
      );
      this.#stmt.dequeue.run(item.messageId);
      if (this.#loaded) this.#index.add({ messageId: item.messageId, sessionId: item.sessionId, bits });
    }
  }

  /**
   * Puts these messages back for a later try at `now + delayMs`; a message tried `maxAttempts` times
   * leaves the backlog (it stays findable by keywords). Returns how many were dropped.
   */
  retryLater(
    messageIds: readonly number[],
    error: string,
    delayMs: number,
    maxAttempts: number,
    now = Date.now(),
  ): number {
    let dropped = 0;
    for (const id of messageIds) {
      this.#stmt.retry.run(now + delayMs, error.slice(0, 500), id);
      dropped += Number(this.#stmt.dropExhausted.run(id, maxAttempts).changes);
    }
    return dropped;
  }

  /**
   * Loads the stored vectors' sign bits into memory, a few thousand rows per event-loop turn so a large
   * file never blocks the process for long. Idempotent: later calls wait for the first.
   */
  load(): Promise<void> {
    this.#loaded ??= (async () => {
      let after = 0;
      for (;;) {
        if (!this.#db.open) return;
        const rows = this.#stmt.loadChunk.all(this.#modelId, after, 5000);
        for (const row of rows) {
          this.#index.add({ messageId: row.messageId, sessionId: row.sessionId, bits: toWords(row.bits) });
          after = row.messageId;
        }
        if (rows.length < 5000) return;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    })();
    return this.#loaded;
  }

  /** Vectors held in memory (after `load`). */
  get indexed(): number {
    return this.#index.size;
  }

  /**
   * The messages nearest to `query` (unit length) in meaning, within the caller's scope (`userId`,
   * `keyPrefix`, `excludeSessionId` as in `SessionStore.search`), most similar first, those below
   * `minSimilarity` left out. Call after `load()`.
   */
  search(
    query: Float32Array,
    options: SearchOptions & { minSimilarity?: number; pool?: number } = {},
  ): VectorHit[] {
    const limit = options.limit ?? 10;
    const scope = {
      keyPrefix: options.keyPrefix ?? null,
      userId: options.userId ?? null,
      exclude: options.excludeSessionId ?? null,
    };
    const sessions = this.#stmt.scope.all(scope).map((r) => r.id);
    const pool = Math.max(options.pool ?? 200, limit * 4);
    const ids = this.#index.nearest(signBits(query), sessions, pool);
    if (ids.length === 0) return [];
    const rows = this.#stmt.candidates.all({ ...scope, ids: JSON.stringify(ids), model: this.#modelId });
    const min = options.minSimilarity ?? -1;
    const hits: VectorHit[] = [];
    for (const row of rows) {
      const similarity = dot(query, toFloats(row.vector));
      if (similarity < min) continue;
      hits.push({
        sessionId: row.sessionId,
        sessionKey: row.sessionKey,
        seq: row.seq,
        role: row.role,
        snippet: excerpt(row.content),
        createdAt: row.createdAt,
        similarity,
      });
    }
    return hits.sort((a, b) => b.similarity - a.similarity).slice(0, limit);
  }

  /** The configured vector length. */
  get dimensions(): number {
    return this.#dimensions;
  }
}

function prepare(db: Database.Database) {
  return {
    mark: db.prepare<[], { upto: number }>("SELECT queued_upto AS upto FROM embedding_state"),
    clampMark: db.prepare(
      "UPDATE embedding_state SET queued_upto = MIN(queued_upto, (SELECT COALESCE(MAX(id), 0) FROM messages))",
    ),
    stepEnd: db.prepare<[number, number], { end: number | null }>(
      "SELECT MAX(id) AS end FROM (SELECT id FROM messages WHERE id > ? ORDER BY id LIMIT ?)",
    ),
    queueRange: db.prepare(
      `INSERT OR IGNORE INTO embedding_backlog (message_id, next_attempt_at)
       SELECT m.id, @now FROM messages m
       WHERE m.id > @from AND m.id <= @end AND m.role IN ('user', 'assistant')
         AND m.content IS NOT NULL AND length(trim(m.content)) > 0
         AND NOT EXISTS (SELECT 1 FROM message_vectors v WHERE v.message_id = m.id AND v.model_id = @model)`,
    ),
    setMark: db.prepare<[number]>("UPDATE embedding_state SET queued_upto = ?"),
    due: db.prepare<
      [number, number],
      { messageId: number; sessionId: string; text: string; attempts: number }
    >(
      `SELECT b.message_id AS messageId, m.session_id AS sessionId, m.content AS text, b.attempts
       FROM embedding_backlog b JOIN messages m ON m.id = b.message_id
       WHERE b.next_attempt_at <= ? AND m.content IS NOT NULL
       ORDER BY b.message_id LIMIT ?`,
    ),
    countBacklog: db.prepare<[], { n: number }>("SELECT count(*) AS n FROM embedding_backlog"),
    countUnseen: db.prepare<[], { n: number }>(
      "SELECT count(*) AS n FROM messages WHERE id > (SELECT queued_upto FROM embedding_state) AND role IN ('user', 'assistant')",
    ),
    upsert: db.prepare<[number, number, Buffer]>(
      "INSERT OR REPLACE INTO message_vectors (message_id, model_id, vector) VALUES (?, ?, ?)",
    ),
    upsertBits: db.prepare<[number, number, string, Buffer]>(
      "INSERT OR REPLACE INTO message_vector_bits (message_id, model_id, session_id, bits) VALUES (?, ?, ?, ?)",
    ),
    dequeue: db.prepare<[number]>("DELETE FROM embedding_backlog WHERE message_id = ?"),
    retry: db.prepare<[number, string, number]>(
      "UPDATE embedding_backlog SET attempts = attempts + 1, next_attempt_at = ?, last_error = ? WHERE message_id = ?",
    ),
    dropExhausted: db.prepare<[number, number]>(
      "DELETE FROM embedding_backlog WHERE message_id = ? AND attempts >= ?",
    ),
    loadChunk: db.prepare<[number, number, number], { messageId: number; sessionId: string; bits: Buffer }>(
      `SELECT message_id AS messageId, session_id AS sessionId, bits FROM message_vector_bits
       WHERE model_id = ? AND message_id > ? ORDER BY message_id LIMIT ?`,
    ),
    scope: db.prepare<
      { keyPrefix: string | null; userId: string | null; exclude: string | null },
      { id: string }
    >(
      `SELECT id FROM sessions
       WHERE (@keyPrefix IS NULL OR substr(key, 1, length(@keyPrefix)) = @keyPrefix)
         AND (@userId IS NULL OR user_id = @userId)
         AND (@exclude IS NULL OR id <> @exclude)`,
    ),
    candidates: db.prepare<
      { keyPrefix: string | null; userId: string | null; exclude: string | null; ids: string; model: number },
      CandidateRow
    >(
      `SELECT v.message_id AS messageId, v.vector, m.session_id AS sessionId, s.key AS sessionKey, m.seq,
         m.role, m.content, m.created_at AS createdAt
       FROM json_each(@ids) j
       JOIN message_vectors v ON v.message_id = j.value AND v.model_id = @model
       JOIN messages m ON m.id = v.message_id
       JOIN sessions s ON s.id = m.session_id
       WHERE m.content IS NOT NULL
         AND (@keyPrefix IS NULL OR substr(s.key, 1, length(@keyPrefix)) = @keyPrefix)
         AND (@userId IS NULL OR s.user_id = @userId)
         AND (@exclude IS NULL OR m.session_id <> @exclude)`,
    ),
  };
}

/** The bytes of a stored BLOB as 32-bit words (copied: a BLOB's buffer may be shared or unaligned). */
function toWords(blob: Buffer): Uint32Array {
  const words = new Uint32Array(Math.ceil(blob.byteLength / 4));
  new Uint8Array(words.buffer).set(blob);
  return words;
}

function toFloats(blob: Buffer): Float32Array {
  const floats = new Float32Array(blob.byteLength / 4);
  new Uint8Array(floats.buffer).set(blob);
  return floats;
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  const n = Math.min(a.length, b.length);
  for (let k = 0; k < n; k++) sum += (a[k] ?? 0) * (b[k] ?? 0);
  return sum;
}

/** The start of a message, whitespace folded, at most 200 characters. */
function excerpt(content: string): string {
  const text = content.replace(/\s+/g, " ").trim();
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
