/**
 * Rows and prepared statements of the session tables, shared by `SqliteSessionStore`. Internal to
 * `sessions/`.
 */
import type Database from "better-sqlite3";
import type { ChatMessage, ToolCall } from "../core/types.js";
import type { SearchHit, Session, StoredMessage } from "./types.js";

/** A row of `sessions`. */
export interface SessionRow {
  id: string;
  key: string;
  platform: string;
  chat_id: string;
  thread_id: string | null;
  chat_type: Session["chatType"];
  user_id: string;
  created_at: number;
  last_active_at: number;
  ended_at: number | null;
  end_reason: Session["endReason"] | null;
  title: string | null;
  message_count: number;
}

/** A row of `messages`. */
export interface MessageRow {
  session_id: string;
  seq: number;
  role: ChatMessage["role"];
  content: string | null;
  tool_calls: string | null;
  tool_call_id: string | null;
  name: string | null;
  created_at: number;
  turn_id: string | null;
}

/** A session row as the contract's `Session`. */
export function toSession(row: SessionRow): Session {
  const session: Session = {
    id: row.id,
    key: row.key,
    chat: { platform: row.platform, chatId: row.chat_id },
    chatType: row.chat_type,
    userId: row.user_id,
    createdAt: row.created_at,
    lastActiveAt: row.last_active_at,
    messageCount: row.message_count,
  };
  if (row.thread_id !== null) session.chat.threadId = row.thread_id;
  if (row.ended_at !== null) session.endedAt = row.ended_at;
  if (row.end_reason !== null) session.endReason = row.end_reason;
  if (row.title !== null) session.title = row.title;
  return session;
}

function toChatMessage(row: MessageRow): ChatMessage {
  switch (row.role) {
    case "system":
      return { role: "system", content: row.content ?? "" };
    case "user":
      return row.name === null
        ? { role: "user", content: row.content ?? "" }
        : { role: "user", content: row.content ?? "", name: row.name };
    case "assistant":
      return row.tool_calls === null
        ? { role: "assistant", content: row.content }
        : { role: "assistant", content: row.content, tool_calls: JSON.parse(row.tool_calls) as ToolCall[] };
    case "tool":
      return { role: "tool", content: row.content ?? "", tool_call_id: row.tool_call_id ?? "" };
  }
}

/** A message row as the contract's `StoredMessage`. */
export function toStored(row: MessageRow): StoredMessage {
  const stored: StoredMessage = {
    sessionId: row.session_id,
    seq: row.seq,
    message: toChatMessage(row),
    createdAt: row.created_at,
  };
  if (row.turn_id !== null) stored.turnId = row.turn_id;
  return stored;
}

/** A row of the search statements: a `SearchHit` plus what its sender tag is read from. */
export interface SearchRow extends SearchHit {
  chatType: Session["chatType"];
  /** The start of a user message (its sender tag, in a shared group session); null for other roles. */
  head: string | null;
}

/**
 * SQL for the agent a session key in `column` belongs to, as `agentOfKey` (core/chat.ts) reads it: the
 * prefix before a `/` that comes before the first `:`, else `default`; NULL where `column` is NULL.
 */
export function agentOfKeySql(column: string): string {
  return `(CASE WHEN ${column} IS NULL THEN NULL
    WHEN instr(${column}, '/') > 1 AND (instr(${column}, ':') = 0 OR instr(${column}, '/') < instr(${column}, ':'))
    THEN substr(${column}, 1, instr(${column}, '/') - 1) ELSE 'default' END)`;
}

/** Prepares every statement of the session store once. */
export function prepareSessionStatements(db: Database.Database) {
  return {
    active: db.prepare<[string], SessionRow>("SELECT * FROM sessions WHERE key = ? AND ended_at IS NULL"),
    get: db.prepare<[string], SessionRow>("SELECT * FROM sessions WHERE id = ?"),
    insert: db.prepare(
      `INSERT INTO sessions (id, key, platform, chat_id, thread_id, chat_type, user_id, created_at,
         last_active_at) VALUES (@id, @key, @platform, @chatId, @threadId, @chatType, @userId, @now, @now)`,
    ),
    end: db.prepare<[number, string, string]>(
      "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL",
    ),
    maxSeq: db.prepare<[string], { seq: number }>(
      "SELECT COALESCE(MAX(seq), 0) AS seq FROM messages WHERE session_id = ?",
    ),
    insertMessage: db.prepare<[MessageRow]>(
      `INSERT INTO messages (session_id, seq, role, content, tool_calls, tool_call_id, name, created_at,
         turn_id) VALUES (@session_id, @seq, @role, @content, @tool_calls, @tool_call_id, @name, @created_at,
         @turn_id)`,
    ),
    touch: db.prepare<[number, number, string | null, string]>(
      `UPDATE sessions SET last_active_at = MAX(last_active_at, ?), message_count = message_count + ?,
         title = COALESCE(title, ?) WHERE id = ?`,
    ),
    lastCompaction: db.prepare<[string], { upto_seq: number; summary: string; created_at: number }>(
      "SELECT upto_seq, summary, created_at FROM compactions WHERE session_id = ? ORDER BY upto_seq DESC LIMIT 1",
    ),
    messagesAfter: db.prepare<[string, number], MessageRow>(
      "SELECT * FROM messages WHERE session_id = ? AND seq > ? ORDER BY seq",
    ),
    insertCompaction: db.prepare<[string, number, string, number]>(
      "INSERT OR REPLACE INTO compactions (session_id, upto_seq, summary, created_at) VALUES (?, ?, ?, ?)",
    ),
    markCompacted: db.prepare<[string, number]>(
      "UPDATE messages SET compacted = 1 WHERE session_id = ? AND seq <= ? AND compacted = 0",
    ),
    truncateMessages: db.prepare<[string, number]>("DELETE FROM messages WHERE session_id = ? AND seq >= ?"),
    truncateCompactions: db.prepare<[string, number]>(
      "DELETE FROM compactions WHERE session_id = ? AND upto_seq >= ?",
    ),
    uncount: db.prepare<[number, string]>(
      "UPDATE sessions SET message_count = MAX(0, message_count - ?) WHERE id = ?",
    ),
    setTitle: db.prepare<[string, string]>("UPDATE sessions SET title = ? WHERE id = ?"),
    reopen: db.prepare<[number, string]>(
      "UPDATE sessions SET ended_at = NULL, end_reason = NULL, last_active_at = ? WHERE id = ?",
    ),
    indexedUpto: db.prepare<[], { upto: number }>("SELECT indexed_upto AS upto FROM fts_progress"),
    /** The id up to which the next index step goes: `limit` messages past the index at most. */
    indexStepEnd: db.prepare<[number, number], { end: number | null }>(
      "SELECT MAX(id) AS end FROM (SELECT id FROM messages WHERE id > ? ORDER BY id LIMIT ?)",
    ),
    indexRange: db.prepare<[number, number]>(
      `INSERT INTO messages_fts(rowid, content)
       SELECT id, content FROM messages WHERE id > ? AND id <= ? AND content IS NOT NULL`,
    ),
    setIndexedUpto: db.prepare<[number]>("UPDATE fts_progress SET indexed_upto = ?"),
    /** After a prune removed the newest rows: ids above the remaining maximum may be handed out again. */
    clampIndexedUpto: db.prepare(
      "UPDATE fts_progress SET indexed_upto = MIN(indexed_upto, (SELECT COALESCE(MAX(id), 0) FROM messages))",
    ),
    search: db.prepare(
      `SELECT m.session_id AS sessionId, s.key AS sessionKey, m.seq, m.role, m.created_at AS createdAt,
         snippet(messages_fts, 0, '**', '**', '…', 16) AS snippet, s.chat_type AS chatType,
         CASE WHEN m.role = 'user' THEN substr(m.content, 1, 120) END AS head
       FROM messages_fts
       JOIN messages m ON m.id = messages_fts.rowid
       JOIN sessions s ON s.id = m.session_id
       WHERE messages_fts MATCH @match
         AND (@keyPrefix IS NULL OR substr(s.key, 1, length(@keyPrefix)) = @keyPrefix)
         AND (@userId IS NULL OR s.user_id = @userId)
         AND (@exclude IS NULL OR m.session_id <> @exclude)
       ORDER BY bm25(messages_fts), m.created_at DESC
       LIMIT @limit`,
    ),
    /** Active sessions, counted on the partial index of active keys. */
    countActive: db.prepare<[], { n: number }>("SELECT count(*) AS n FROM sessions WHERE ended_at IS NULL"),
    /** Newest matches first: FTS5 walks its index by rowid and stops at the limit (no ranking of every match). */
    searchNewest: db.prepare(
      `SELECT m.session_id AS sessionId, s.key AS sessionKey, m.seq, m.role, m.created_at AS createdAt,
         snippet(messages_fts, 0, '**', '**', '…', 16) AS snippet, s.chat_type AS chatType,
         CASE WHEN m.role = 'user' THEN substr(m.content, 1, 120) END AS head
       FROM messages_fts
       JOIN messages m ON m.id = messages_fts.rowid
       JOIN sessions s ON s.id = m.session_id
       WHERE messages_fts MATCH @match
       ORDER BY messages_fts.rowid DESC
       LIMIT @limit`,
    ),
    list: db.prepare(
      `SELECT * FROM sessions
       WHERE (@activeOnly = 0 OR ended_at IS NULL)
         AND (@keyPrefix IS NULL OR substr(key, 1, length(@keyPrefix)) = @keyPrefix)
         AND (@agent IS NULL OR ${agentOfKeySql("key")} = @agent)
       ORDER BY last_active_at DESC, created_at DESC LIMIT @limit`,
    ),
    pruneMessages: db.prepare<[number]>(
      `DELETE FROM messages WHERE session_id IN
         (SELECT id FROM sessions WHERE ended_at IS NOT NULL AND last_active_at < ?)`,
    ),
    pruneCompactions: db.prepare<[number]>(
      `DELETE FROM compactions WHERE session_id IN
         (SELECT id FROM sessions WHERE ended_at IS NOT NULL AND last_active_at < ?)`,
    ),
    pruneSessions: db.prepare<[number]>(
      "DELETE FROM sessions WHERE ended_at IS NOT NULL AND last_active_at < ?",
    ),
  };
}

/** The prepared statements of the session store. */
export type SessionStatements = ReturnType<typeof prepareSessionStatements>;
