import { randomUUID } from "node:crypto";
import { agentOfKey, sessionKey } from "../core/chat.js";
import { HeraldError } from "../core/errors.js";
import { isSharedGroup, withSenderTag } from "../core/speakers.js";
import type { ChatMessage, GroupSessionMode, SessionKeyParts } from "../core/types.js";
import { compactionSummary } from "./compaction.js";
import { staleReason } from "./reset-policy.js";
import { queryTerms, textSnippet } from "./search-query.js";
import type {
  OpenedSession,
  ResetPolicy,
  SearchHit,
  SearchOptions,
  Session,
  SessionStore,
  StoredMessage,
} from "./types.js";

interface Entry {
  session: Session;
  messages: StoredMessage[];
  compaction?: { uptoSeq: number; summary: string; createdAt: number } | undefined;
}

/** Options of `MemorySessionStore`. */
export interface MemorySessionStoreOptions {
  /** How group chats are keyed when `open` builds the key. @defaultValue "per_user" */
  groupMode?: GroupSessionMode | undefined;
}

const clone = <T>(value: T): T => structuredClone(value);

/** "Café" → "Cafe", as FTS5's `remove_diacritics` tokenizer sees it. */
const withoutMarks = (text: string): string => text.normalize("NFD").replace(/\p{M}/gu, "");

/**
 * `SessionStore` in memory, for unit tests of the parts that use one. Same behaviour as
 * `SqliteSessionStore` except search, which matches whole words and ranks by how many query words a
 * message has. Returned objects are copies: changing them changes nothing stored.
 */
export class MemorySessionStore implements SessionStore {
  readonly #groupMode: GroupSessionMode;
  readonly #entries = new Map<string, Entry>();
  readonly #active = new Map<string, string>();

  constructor(options: MemorySessionStoreOptions = {}) {
    this.#groupMode = options.groupMode ?? "per_user";
  }

  open(parts: SessionKeyParts, policy: ResetPolicy, now: number = Date.now()): OpenedSession {
    const key = sessionKey(parts, this.#groupMode);
    const current = this.#activeEntry(key);
    let autoReset: OpenedSession["autoReset"];
    if (current) {
      const { session } = current;
      const reason = session.messageCount > 0 ? staleReason(session.lastActiveAt, policy, now) : undefined;
      if (!reason) return { session: clone(session) };
      this.#end(session, reason, now);
      autoReset = { reason, previousSessionId: session.id };
    }
    const chat = parts.chat.threadId
      ? { platform: parts.chat.platform, chatId: parts.chat.chatId, threadId: parts.chat.threadId }
      : { platform: parts.chat.platform, chatId: parts.chat.chatId };
    const session: Session = {
      id: randomUUID(),
      key,
      chat,
      chatType: parts.chatType,
      userId: parts.userId,
      createdAt: now,
      lastActiveAt: now,
      messageCount: 0,
    };
    this.#entries.set(session.id, { session, messages: [] });
    this.#active.set(key, session.id);
    return autoReset ? { session: clone(session), autoReset } : { session: clone(session) };
  }

  get(sessionId: string): Session | undefined {
    const entry = this.#entries.get(sessionId);
    return entry && clone(entry.session);
  }

  load(sessionId: string): StoredMessage[] {
    const entry = this.#entries.get(sessionId);
    if (!entry) return [];
    const { compaction } = entry;
    const after = entry.messages.filter((m) => m.seq > (compaction?.uptoSeq ?? 0)).map(clone);
    if (!compaction) return after;
    return [compactionSummary(sessionId, compaction), ...after];
  }

  append(
    sessionId: string,
    messages: ChatMessage[],
    options: { turnId?: string; now?: number } = {},
  ): number[] {
    const entry = this.#entries.get(sessionId);
    if (!entry) {
      throw new HeraldError(`Cannot append to session ${sessionId}: no such session (was it pruned?).`, {
        code: "not_found",
      });
    }
    const now = options.now ?? Date.now();
    const { session } = entry;
    const seqs: number[] = [];
    for (const message of messages) {
      const stored: StoredMessage = {
        sessionId,
        seq: (entry.messages.at(-1)?.seq ?? 0) + 1,
        message: clone(message),
        createdAt: now,
      };
      if (options.turnId !== undefined) stored.turnId = options.turnId;
      entry.messages.push(stored);
      seqs.push(stored.seq);
      if (session.title === undefined && message.role === "user")
        session.title = message.content.slice(0, 80);
    }
    if (messages.length > 0) {
      session.messageCount += messages.length;
      session.lastActiveAt = Math.max(session.lastActiveAt, now);
    }
    return seqs;
  }

  reset(key: string, reason: "manual" | "idle" | "daily"): Session | undefined {
    const entry = this.#activeEntry(key);
    if (!entry) return undefined;
    this.#end(entry.session, reason, Date.now());
    return clone(entry.session);
  }

  /** Whole-word, case-insensitive; all words first, any word when that finds nothing (unless `allTerms`). */
  search(query: string, options: SearchOptions = {}): SearchHit[] {
    const terms = queryTerms(withoutMarks(query));
    if (terms.length === 0) return [];
    const scored: { hit: SearchHit; matched: number }[] = [];
    for (const { session, messages } of this.#entries.values()) {
      if (options.keyPrefix !== undefined && !session.key.startsWith(options.keyPrefix)) continue;
      if (options.userId !== undefined && session.userId !== options.userId) continue;
      if (session.id === options.excludeSessionId) continue;
      for (const m of messages) {
        const content = m.message.content;
        if (!content) continue;
        const words = new Set(queryTerms(withoutMarks(content)));
        const matched = terms.filter((t) => words.has(t)).length;
        if (matched === 0) continue;
        const hit: SearchHit = {
          sessionId: session.id,
          sessionKey: session.key,
          seq: m.seq,
          role: m.message.role,
          snippet:
            m.message.role === "user" && isSharedGroup(session.chatType, this.#groupMode)
              ? withSenderTag(textSnippet(content, terms), content)
              : textSnippet(content, terms),
          createdAt: m.createdAt,
        };
        scored.push({ hit, matched });
      }
    }
    const all = scored.filter((s) => s.matched === terms.length);
    const chosen = all.length > 0 || options.allTerms ? all : scored;
    chosen.sort((a, b) => b.matched - a.matched || b.hit.createdAt - a.hit.createdAt);
    return chosen.slice(0, options.limit ?? 10).map((s) => s.hit);
  }

  compact(sessionId: string, uptoSeq: number, summary: string): void {
    const entry = this.#entries.get(sessionId);
    if (entry) entry.compaction = { uptoSeq, summary, createdAt: Date.now() };
  }

  truncate(sessionId: string, fromSeq: number): number {
    const entry = this.#entries.get(sessionId);
    if (!entry) return 0;
    const before = entry.messages.length;
    entry.messages = entry.messages.filter((m) => m.seq < fromSeq);
    if (entry.compaction && entry.compaction.uptoSeq >= fromSeq) entry.compaction = undefined;
    const removed = before - entry.messages.length;
    entry.session.messageCount = Math.max(0, entry.session.messageCount - removed);
    return removed;
  }

  setTitle(sessionId: string, title: string): void {
    const entry = this.#entries.get(sessionId);
    if (entry) entry.session.title = title;
  }

  resume(sessionId: string, now: number = Date.now()): { session: Session; replaced?: Session } | undefined {
    const entry = this.#entries.get(sessionId);
    if (!entry) return undefined;
    const { session } = entry;
    if (session.endedAt === undefined) return { session: clone(session) };
    const current = this.#activeEntry(session.key);
    if (current) this.#end(current.session, "manual", now);
    delete session.endedAt;
    delete session.endReason;
    session.lastActiveAt = now;
    this.#active.set(session.key, session.id);
    return current
      ? { session: clone(session), replaced: clone(current.session) }
      : { session: clone(session) };
  }

  list(
    options: { limit?: number; activeOnly?: boolean; keyPrefix?: string; agent?: string } = {},
  ): Session[] {
    return [...this.#entries.values()]
      .map((e) => e.session)
      .filter((s) => !options.activeOnly || s.endedAt === undefined)
      .filter((s) => options.keyPrefix === undefined || s.key.startsWith(options.keyPrefix))
      .filter((s) => options.agent === undefined || (agentOfKey(s.key) ?? "default") === options.agent)
      .sort((a, b) => b.lastActiveAt - a.lastActiveAt || b.createdAt - a.createdAt)
      .slice(0, options.limit ?? 100)
      .map(clone);
  }

  prune(beforeMs: number): number {
    let pruned = 0;
    for (const [id, { session }] of this.#entries) {
      if (session.endedAt !== undefined && session.lastActiveAt < beforeMs) {
        this.#entries.delete(id);
        pruned++;
      }
    }
    return pruned;
  }

  /** Forgets everything. */
  close(): void {
    this.#entries.clear();
    this.#active.clear();
  }

  #activeEntry(key: string): Entry | undefined {
    const id = this.#active.get(key);
    return id === undefined ? undefined : this.#entries.get(id);
  }

  #end(session: Session, reason: NonNullable<Session["endReason"]>, now: number): void {
    session.endedAt = now;
    session.endReason = reason;
    this.#active.delete(session.key);
  }
}
