import { randomUUID } from "node:crypto";
import type Database from "better-sqlite3";
import { sessionKey } from "../core/chat.js";
import { HeraldError } from "../core/errors.js";
import { isSharedGroup, withSenderTag } from "../core/speakers.js";
import type { ChatMessage, GroupSessionMode, SessionKeyParts } from "../core/types.js";
import { compactionSummary } from "./compaction.js";
import { HistoryCache } from "./history-cache.js";
import { staleReason } from "./reset-policy.js";
import { ftsExpression, queryTerms } from "./search-query.js";
import {
  type MessageRow,
  prepareSessionStatements,
  type SearchRow,
  type SessionRow,
  type SessionStatements,
  toSession,
  toStored,
} from "./sqlite-session-sql.js";
import type {
  OpenedSession,
  ResetPolicy,
  SearchHit,
  SearchOptions,
  Session,
  SessionStore,
  StoredMessage,
} from "./types.js";

/** Options of `SqliteSessionStore`. */
export interface SqliteSessionStoreOptions {
  /** How group chats are keyed when `open` builds the key. @defaultValue "per_user" */
  groupMode?: GroupSessionMode | undefined;
  /**
   * Budget of the cache of recently loaded histories, in approximate bytes; 0 turns it off. Only for a
   * connection that is the one writer of messages (the gateway's): another writer's appends are not seen.
   * @defaultValue 0
   */
  historyCacheBytes?: number | undefined;
}

/** Characters of the first user message kept as a session's title. */
const TITLE_MAX_CHARS = 80;

/** Messages appended (by this connection) that make `append` bring the search index up to date. */
const INDEX_AFTER_MESSAGES = 256;
/** Messages indexed per step (a search after a long pause indexes in steps of this size). */
const INDEX_STEP = 5_000;

/**
 * `SessionStore` on a better-sqlite3 database migrated by `migrate()`. It does not own the database:
 * `close()` does nothing, the owner (`SqliteState`) closes it. Every method is synchronous and throws
 * only on database faults (or `not_found` when appending to an unknown session).
 */
export class SqliteSessionStore implements SessionStore {
  readonly #groupMode: GroupSessionMode;
  readonly #stmt: SessionStatements;
  readonly #openTx: Database.Transaction<
    (parts: SessionKeyParts, policy: ResetPolicy, now: number) => OpenedSession
  >;
  readonly #appendTx: Database.Transaction<
    (sessionId: string, messages: ChatMessage[], turnId: string | null, now: number) => number[]
  >;
  readonly #compactTx: Database.Transaction<
    (sessionId: string, uptoSeq: number, summary: string, now: number) => void
  >;
  readonly #pruneTx: Database.Transaction<(beforeMs: number) => number>;
  readonly #truncateTx: Database.Transaction<(sessionId: string, fromSeq: number) => number>;
  readonly #resumeTx: Database.Transaction<
    (sessionId: string, now: number) => { session: Session; replaced?: Session | undefined } | undefined
  >;
  readonly #history: HistoryCache;
  readonly #indexTx: Database.Transaction<() => number>;
  /** Messages this connection appended since it last indexed (an estimate: rollbacks are not subtracted). */
  #unindexed = 0;

  constructor(db: Database.Database, options: SqliteSessionStoreOptions = {}) {
    this.#groupMode = options.groupMode ?? "per_user";
    this.#history = new HistoryCache(options.historyCacheBytes ?? 0);
    this.#stmt = prepareSessionStatements(db);
    this.#openTx = db.transaction(this.#openInTx.bind(this));
    this.#appendTx = db.transaction(this.#appendInTx.bind(this));
    this.#compactTx = db.transaction((sessionId: string, uptoSeq: number, summary: string, now: number) => {
      this.#stmt.insertCompaction.run(sessionId, uptoSeq, summary, now);
      this.#stmt.markCompacted.run(sessionId, uptoSeq);
    });
    this.#pruneTx = db.transaction((beforeMs: number) => {
      this.#stmt.pruneMessages.run(beforeMs);
      this.#stmt.pruneCompactions.run(beforeMs);
      const removed = this.#stmt.pruneSessions.run(beforeMs).changes;
      this.#stmt.clampIndexedUpto.run();
      return removed;
    });
    this.#truncateTx = db.transaction((sessionId: string, fromSeq: number) => {
      const removed = this.#stmt.truncateMessages.run(sessionId, fromSeq).changes;
      this.#stmt.truncateCompactions.run(sessionId, fromSeq);
      if (removed) this.#stmt.uncount.run(removed, sessionId);
      return removed;
    });
    this.#resumeTx = db.transaction((sessionId: string, now: number) => {
      const row = this.#stmt.get.get(sessionId);
      if (!row) return undefined;
      if (row.ended_at === null) return { session: toSession(row) };
      const current = this.#stmt.active.get(row.key);
      if (current) this.#stmt.end.run(now, "manual", current.id);
      this.#stmt.reopen.run(now, sessionId);
      const session = toSession(this.#stmt.get.get(sessionId)!);
      return current ? { session, replaced: toSession(this.#stmt.get.get(current.id)!) } : { session };
    });
    this.#indexTx = db.transaction(() => {
      let indexed = 0;
      for (;;) {
        const upto = this.#stmt.indexedUpto.get()!.upto;
        const end = this.#stmt.indexStepEnd.get(upto, INDEX_STEP)!.end;
        if (end === null) break;
        indexed += this.#stmt.indexRange.run(upto, end).changes;
        this.#stmt.setIndexedUpto.run(end);
      }
      this.#unindexed = 0;
      return indexed;
    });
  }

  /**
   * The active session of `parts`, created if none. A stale one (by `policy`) is ended first and
   * reported once in `autoReset`. A stale session without messages is kept: there is nothing to forget.
   */
  open(parts: SessionKeyParts, policy: ResetPolicy, now: number = Date.now()): OpenedSession {
    return this.#openTx.immediate(parts, policy, now);
  }

  #openInTx(parts: SessionKeyParts, policy: ResetPolicy, now: number): OpenedSession {
    const key = sessionKey(parts, this.#groupMode);
    const row = this.#stmt.active.get(key);
    let autoReset: OpenedSession["autoReset"];
    if (row) {
      const reason = row.message_count > 0 ? staleReason(row.last_active_at, policy, now) : undefined;
      if (!reason) return { session: toSession(row) };
      this.#stmt.end.run(now, reason, row.id);
      this.#history.delete(row.id);
      autoReset = { reason, previousSessionId: row.id };
    }
    const id = randomUUID();
    this.#stmt.insert.run({
      id,
      key,
      platform: parts.chat.platform,
      chatId: parts.chat.chatId,
      threadId: parts.chat.threadId ?? null,
      chatType: parts.chatType,
      userId: parts.userId,
      now,
    });
    const session = toSession(this.#stmt.get.get(id)!);
    return autoReset ? { session, autoReset } : { session };
  }

  get(sessionId: string): Session | undefined {
    const row = this.#stmt.get.get(sessionId);
    return row && toSession(row);
  }

  /**
   * The messages after the session's latest compaction, preceded by that compaction's summary as a
   * system message whose seq is the last seq it replaces. Recent histories come from a cache that
   * `append` keeps current: treat the returned messages as read-only.
   */
  load(sessionId: string): StoredMessage[] {
    const cached = this.#history.get(sessionId);
    if (cached) return cached;
    const compaction = this.#stmt.lastCompaction.get(sessionId);
    const afterSeq = compaction?.upto_seq ?? 0;
    const messages = this.#stmt.messagesAfter.all(sessionId, afterSeq).map(toStored);
    const lastSeq = messages[messages.length - 1]?.seq ?? afterSeq;
    if (compaction) {
      const { upto_seq: uptoSeq, summary, created_at: createdAt } = compaction;
      messages.unshift(compactionSummary(sessionId, { uptoSeq, summary, createdAt }));
    }
    this.#history.set(sessionId, messages, lastSeq);
    return messages;
  }

  /**
   * Forgets every cached history. `SqliteState` calls it when a transaction rolls back: appends the
   * cache saw may be undone.
   */
  forgetCachedHistories(): void {
    this.#history.clear();
  }

  /** Appends in one transaction. Throws a `not_found` HeraldError for an unknown session. */
  append(
    sessionId: string,
    messages: ChatMessage[],
    options: { turnId?: string; now?: number } = {},
  ): number[] {
    try {
      return this.#appendTx.immediate(sessionId, messages, options.turnId ?? null, options.now ?? Date.now());
    } catch (err) {
      this.#history.delete(sessionId);
      throw err;
    }
  }

  #appendInTx(sessionId: string, messages: ChatMessage[], turnId: string | null, now: number): number[] {
    if (messages.length === 0) return [];
    const last = this.#stmt.maxSeq.get(sessionId)!.seq;
    const seqs: number[] = [];
    const stored: StoredMessage[] = [];
    let title: string | null = null;
    for (const [i, message] of messages.entries()) {
      const row: MessageRow = {
        session_id: sessionId,
        seq: last + i + 1,
        role: message.role,
        content: message.content,
        tool_calls:
          message.role === "assistant" && message.tool_calls ? JSON.stringify(message.tool_calls) : null,
        tool_call_id: message.role === "tool" ? message.tool_call_id : null,
        name: message.role === "user" ? (message.name ?? null) : null,
        created_at: now,
        turn_id: turnId,
      };
      this.#stmt.insertMessage.run(row);
      if (title === null && message.role === "user") title = message.content.slice(0, TITLE_MAX_CHARS);
      seqs.push(row.seq);
      stored.push(toStored(row));
    }
    const updated = this.#stmt.touch.run(now, messages.length, title, sessionId);
    if (updated.changes === 0) {
      throw new HeraldError(`Cannot append to session ${sessionId}: no such session (was it pruned?).`, {
        code: "not_found",
      });
    }
    // Built from the rows as `load` would read them back (a deep copy, normalised the same way).
    this.#history.append(sessionId, last, stored);
    this.#unindexed += messages.length;
    if (this.#unindexed >= INDEX_AFTER_MESSAGES) this.#indexTx();
    return seqs;
  }

  reset(key: string, reason: "manual" | "idle" | "daily"): Session | undefined {
    const row = this.#stmt.active.get(key);
    if (!row) return undefined;
    this.#stmt.end.run(Date.now(), reason, row.id);
    this.#history.delete(row.id);
    return toSession(this.#stmt.get.get(row.id)!);
  }

  /**
   * Adds the messages not yet in the search index (appends index in bulk, every few hundred messages,
   * not one by one); returns how many. `search` calls it first.
   */
  indexForSearch(): number {
    // Up to date: no write transaction (a reader in another process never waits for the gateway).
    if (this.#stmt.indexStepEnd.get(this.#stmt.indexedUpto.get()!.upto, 1)!.end === null) return 0;
    return this.#indexTx.immediate();
  }

  /** Ranked by bm25. All terms must match; when nothing does, any term may (unless `allTerms`). */
  search(query: string, options: SearchOptions = {}): SearchHit[] {
    this.indexForSearch();
    const terms = queryTerms(query);
    const params = {
      keyPrefix: options.keyPrefix ?? null,
      userId: options.userId ?? null,
      exclude: options.excludeSessionId ?? null,
      limit: options.limit ?? 10,
    };
    const all = ftsExpression(terms, "all");
    if (all === undefined) return [];
    const hits = this.#stmt.search.all({ ...params, match: all }) as SearchRow[];
    if (hits.length > 0 || terms.length < 2 || options.allTerms) return this.#hits(hits);
    return this.#hits(
      this.#stmt.search.all({ ...params, match: ftsExpression(terms, "any") }) as SearchRow[],
    );
  }

  /** Search rows as hits; a user message of a shared group session keeps its sender tag in the snippet. */
  #hits(rows: SearchRow[]): SearchHit[] {
    return rows.map(({ chatType, head, ...hit }) =>
      head !== null && isSharedGroup(chatType, this.#groupMode)
        ? { ...hit, snippet: withSenderTag(hit.snippet, head) }
        : hit,
    );
  }

  /** How many sessions are active (not ended). */
  countActive(): number {
    return this.#stmt.countActive.get()!.n;
  }

  /**
   * Full-text search, newest messages first (the dashboard): unlike `search` it does not rank every
   * match, so a word found in half a million messages costs no more than a rare one. All terms must
   * match; when nothing does, any term may.
   */
  searchNewest(query: string, limit = 50): SearchHit[] {
    this.indexForSearch();
    const terms = queryTerms(query);
    const all = ftsExpression(terms, "all");
    if (all === undefined) return [];
    const hits = this.#stmt.searchNewest.all({ match: all, limit }) as SearchRow[];
    if (hits.length > 0 || terms.length < 2) return this.#hits(hits);
    return this.#hits(
      this.#stmt.searchNewest.all({ match: ftsExpression(terms, "any"), limit }) as SearchRow[],
    );
  }

  /** Records the summary and flags the replaced messages; they stay stored and searchable. */
  compact(sessionId: string, uptoSeq: number, summary: string): void {
    this.#history.delete(sessionId);
    this.#compactTx.immediate(sessionId, uptoSeq, summary, Date.now());
  }

  truncate(sessionId: string, fromSeq: number): number {
    this.#history.delete(sessionId);
    return this.#truncateTx.immediate(sessionId, fromSeq);
  }

  setTitle(sessionId: string, title: string): void {
    this.#stmt.setTitle.run(title, sessionId);
  }

  resume(sessionId: string, now: number = Date.now()): { session: Session; replaced?: Session } | undefined {
    const result = this.#resumeTx.immediate(sessionId, now);
    if (result?.replaced) this.#history.delete(result.replaced.id);
    return result;
  }

  list(
    options: { limit?: number; activeOnly?: boolean; keyPrefix?: string; agent?: string } = {},
  ): Session[] {
    const rows = this.#stmt.list.all({
      activeOnly: options.activeOnly ? 1 : 0,
      keyPrefix: options.keyPrefix ?? null,
      agent: options.agent ?? null,
      limit: options.limit ?? 100,
    }) as SessionRow[];
    return rows.map(toSession);
  }

  /** Deletes ended sessions last active before `beforeMs`, with their messages and summaries. */
  prune(beforeMs: number): number {
    this.#history.clear();
    return this.#pruneTx.immediate(beforeMs);
  }

  /** Does nothing: the database belongs to whoever passed it in. */
  close(): void {}
}
