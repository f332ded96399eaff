/**
 * Contracts of durable state: sessions and their messages, the inbound ledger, the turn journal, the
 * outbox, pairing and adapter key-value state. `SqliteState` implements them all on one SQLite file.
 */
import type { ModelUsage, TurnRecord, TurnStatus } from "../core/turn.js";
import type {
  ChatMessage,
  ChatRef,
  ChatType,
  InboundMessage,
  OutboundMessage,
  SessionKeyParts,
} from "../core/types.js";

/** A message as stored: the chat message plus its place in the session. */
export interface StoredMessage {
  sessionId: string;
  seq: number;
  message: ChatMessage;
  createdAt: number;
  turnId?: string | undefined;
}

/** When a session ends by itself. */
export interface ResetPolicy {
  mode: "idle" | "daily" | "both" | "none";
  /** @defaultValue 1440 */
  idleMinutes: number;
  /** Local hour (0–23) of the daily reset. @defaultValue 4 */
  atHour: number;
  /** IANA time zone of `atHour`. @defaultValue the process's zone */
  timezone?: string | undefined;
}

export interface Session {
  id: string;
  key: string;
  chat: ChatRef;
  chatType: ChatType;
  userId: string;
  createdAt: number;
  /** Epoch ms of the last message in or out. */
  lastActiveAt: number;
  endedAt?: number | undefined;
  endReason?: "manual" | "idle" | "daily" | "compacted" | undefined;
  title?: string | undefined;
  messageCount: number;
}

/** Result of opening the current session of a key. `autoReset` tells the user gets one notice. */
export interface OpenedSession {
  session: Session;
  /** Set when the previous session ended by the reset policy just now. */
  autoReset?: { reason: "idle" | "daily"; previousSessionId: string } | undefined;
}

export interface SearchHit {
  sessionId: string;
  sessionKey: string;
  seq: number;
  role: ChatMessage["role"];
  /**
   * An excerpt around the match, matched words in `**`. A user message of a shared group session keeps
   * its sender tag in front (`[Alice] …the **weather**…`) even when the excerpt starts mid-message.
   */
  snippet: string;
  createdAt: number;
  /** The session's title, where the search looked it up (`session_search`). */
  sessionTitle?: string | undefined;
}

export interface SearchOptions {
  /** @defaultValue 10 */
  limit?: number | undefined;
  /** Only sessions whose key starts with this (e.g. the caller's own chat). */
  keyPrefix?: string | undefined;
  /** Only sessions of this user. */
  userId?: string | undefined;
  /** Leave out this session (the current one). */
  excludeSessionId?: string | undefined;
  /**
   * Only matches by meaning (recall prefetch, where the whole message is the query and keywords would
   * match its every common word); nothing without an embeddings endpoint. The stores' keyword search
   * ignores it.
   */
  meaningOnly?: boolean | undefined;
  /**
   * Every word must match, with no fallback to any word when none does (the hybrid search: meaning
   * finds what the words miss, and ranking every message that holds a common word is what costs).
   */
  allTerms?: boolean | undefined;
}

/** Sessions and their messages. */
export interface SessionStore {
  /** The active session of `parts` (created if none), ending a stale one by `policy` first. */
  open(parts: SessionKeyParts, policy: ResetPolicy, now?: number): OpenedSession;
  /** A session by id, ended or not. */
  get(sessionId: string): Session | undefined;
  /** The messages of a session in order, from its last compaction summary on. */
  load(sessionId: string): StoredMessage[];
  /** Appends messages in order; returns their seq numbers. Updates `lastActiveAt`. */
  append(sessionId: string, messages: ChatMessage[], options?: { turnId?: string; now?: number }): number[];
  /** Ends the active session of `key` (if any) with `reason`; the next `open` starts a new one. */
  reset(key: string, reason: "manual" | "idle" | "daily"): Session | undefined;
  /** Full-text search over all messages of all sessions (FTS5). */
  search(query: string, options?: SearchOptions): SearchHit[];
  /** Replaces messages with seq ≤ `uptoSeq` by a summary in the loaded view (they stay searchable). */
  compact(sessionId: string, uptoSeq: number, summary: string): void;
  /**
   * Deletes the messages with `seq >= fromSeq` (and any compaction reaching into them): `/undo`,
   * `/retry`. Returns how many messages it deleted.
   */
  truncate(sessionId: string, fromSeq: number): number;
  /** Sets the session's title (`/title`); the first user message is its title until then. */
  setTitle(sessionId: string, title: string): void;
  /**
   * Makes an ended session the active one of its key again (`/resume`), ending the key's current
   * session (`manual`) first; its activity time becomes `now`, so the reset policy starts afresh.
   * Returns the resumed session and the one it replaced, or undefined for an unknown session.
   */
  resume(sessionId: string, now?: number): { session: Session; replaced?: Session | undefined } | undefined;
  /**
   * Sessions, newest activity first; `agent` keeps one agent's (`default`: the keys without an agent
   * prefix, see `agentOfKey`).
   */
  list(options?: { limit?: number; activeOnly?: boolean; keyPrefix?: string; agent?: string }): Session[];
  /** Deletes ended sessions whose last activity is older than `beforeMs`; returns how many. */
  prune(beforeMs: number): number;
  close(): void;
}

/** The inbound ledger: each platform message is processed once. */
export interface InboundLedger {
  /**
   * Records a message; false when `(platform, messageId)` was recorded before (a duplicate).
   * The message is kept with status `received` until `markHandled`, so a crash in between replays it.
   */
  record(message: InboundMessage, now?: number): boolean;
  markHandled(platform: string, messageId: string, outcome: string): void;
  /** Messages recorded but not handled (a crash between recording and handling). */
  unhandled(): InboundMessage[];
  /** Forgets handled entries older than `beforeMs`. */
  prune(beforeMs: number): number;
}

/** The turn journal: which turns exist and where they are, so a crash never loses or doubles one. */
export interface TurnJournal {
  /**
   * Journals a new turn, pending; with `running`, already running with one attempt counted, the row
   * `create` then `markRunning` would leave (a turn claimed in the transaction that creates it).
   */
  create(
    turn: Omit<TurnRecord, "status" | "attempts" | "createdAt">,
    now?: number,
    options?: { running?: boolean },
  ): TurnRecord;
  get(turnId: string): TurnRecord | undefined;
  /** pending → running (returns false if the turn is not pending). Counts an attempt (`attempts`). */
  markRunning(turnId: string, now?: number): boolean;
  /** Sets a final status; returns false if the turn was already final (its result is then stale). */
  finish(turnId: string, status: "done" | "cancelled" | "failed", error?: string, now?: number): boolean;
  /** Non-final turns of one session in creation order. */
  openTurns(sessionKey: string): TurnRecord[];
  /** The first of `openTurns(sessionKey)`, id and status only (the hot path of starting a turn). */
  nextOpen(sessionKey: string): { id: string; status: TurnStatus } | undefined;
  /** Every non-final turn (restart recovery); running ones are returned as they are. */
  allOpen(): TurnRecord[];
  /** Sets running turns back to pending (at start, where other processes run the turns: Redis workers). */
  requeueRunning(): number;
  /**
   * At the start of the process that runs the turns: a turn still running was cut short by the end of
   * the previous process without a clean stop (a crash, an out-of-memory kill). Sets each back to
   * pending with its run counted, and returns them so the caller can fail those that crashed before.
   */
  requeueCrashed(): TurnRecord[];
  /**
   * A clean stop: these running turns (the ones this process runs) go back to pending with their run
   * not counted, so a restart is never taken for a crash. Returns how many changed.
   */
  handBack(turnIds: readonly string[]): number;
  /** Deletes final turns that finished before `beforeMs`; returns how many. */
  prune?(beforeMs: number): number;
}

/** A message waiting for the platform's confirmation. */
export interface OutboxItem {
  id: string;
  chat: ChatRef;
  message: OutboundMessage;
  turnId?: string | undefined;
  /** Chunks already delivered (a retry starts there). */
  chunksSent: number;
  attempts: number;
  nextAttemptAt: number;
  createdAt: number;
  lastError?: string | undefined;
}

/** Durable queue of outgoing messages; an item leaves it only when the platform confirmed it. */
export interface Outbox {
  add(
    chat: ChatRef,
    message: Omit<OutboundMessage, "idempotencyKey">,
    turnId?: string,
    now?: number,
  ): OutboxItem;
  /** Items due for (re)delivery, oldest first. */
  due(now?: number, limit?: number): OutboxItem[];
  /** Undelivered items of every age (restart). */
  pending(): OutboxItem[];
  chunkSent(id: string, index: number): void;
  delivered(id: string): void;
  /** Schedules a retry; after `maxAttempts` the item is dropped with `failed` kept for inspection. */
  retryLater(id: string, error: string, delayMs: number, now?: number): void;
  failed(id: string, error: string): void;
  /** Deletes delivered and failed items created before `beforeMs`; returns how many. */
  prune?(beforeMs: number): number;
}

/** A code an unknown user got, and the owner's decision. */
export interface PairingRequest {
  platform: string;
  userId: string;
  userName?: string | undefined;
  chatId: string;
  createdAt: number;
  expiresAt: number;
}

export interface PairingStore {
  /**
   * Issues a code for this user (a fresh one replaces an older one). Only the hash is stored.
   * Rate-limited: `{ limited: true }` when this user got a still-valid code less than 10 minutes ago,
   * or when 10 unexpired codes are pending; `retryAfterMs` says when asking again can succeed.
   */
  issue(
    request: Omit<PairingRequest, "createdAt" | "expiresAt">,
    now?: number,
  ): { code: string; expiresAt: number } | { limited: true; retryAfterMs: number };
  /** Pending, unexpired requests. */
  pending(now?: number): PairingRequest[];
  /** Approves the holder of `code`; returns who it was, or undefined for an unknown/expired code. */
  approve(code: string, now?: number): { platform: string; userId: string } | undefined;
  /** Admits a user directly (`herald pairing approve telegram:12345`). */
  allow(platform: string, userId: string): void;
  revoke(platform: string, userId: string): boolean;
  isApproved(platform: string, userId: string): boolean;
  approved(): { platform: string; userId: string; approvedAt: number }[];
}

/** Tokens summed over some turns, for one model (and, in `by: "user"` or `by: "agent"`, one user or agent). */
export interface UsageLine extends ModelUsage {
  /** `platform:userId`, in `by: "user"` lines only. */
  user?: string | undefined;
  /**
   * The agent (`default` or a name of `agents:`), in `by: "agent"` lines only; `?` for usage whose
   * session was deleted since (`herald sessions prune`), so its agent is no longer known.
   */
  agent?: string | undefined;
}

/** Token usage per turn and model: written with a turn's result, read by `/usage` and the CLI. */
export interface UsageLedger {
  /** Records the lines of one turn (idempotent per turn and model: a redelivered result replaces them). */
  record(
    turn: Pick<TurnRecord, "id" | "sessionId" | "userId" | "chat">,
    lines: readonly ModelUsage[],
    now: number,
  ): void;
  /** One session's usage by model. */
  forSession(sessionId: string): UsageLine[];
  /** One turn's usage by model (empty when it made no model call or is not finished). */
  forTurn(turnId: string): UsageLine[];
  /**
   * Everything from `since` (epoch ms; 0: all) until before `until` (default: now on), by model, or by
   * user or agent and model; `agent` keeps one agent's (`default`: the sessions whose keys have no agent
   * prefix, see `agentOfKey`), read from the sessions' keys.
   */
  summary(options: {
    since?: number | undefined;
    until?: number | undefined;
    by: "model" | "user" | "agent";
    agent?: string | undefined;
  }): UsageLine[];
}

/** One stored response of the API server (`/v1/responses`): its JSON body, whose chat and user it is. */
export interface StoredResponse {
  id: string;
  /** The `api` chat (the Herald session) the response belongs to. */
  chatId: string;
  userId: string;
  /** The response object as JSON, with what continuing it needs. */
  body: string;
  createdAt: number;
  /** Epoch ms after which it is gone. */
  expiresAt: number;
}

/** Stored API responses, each until it expires. */
export interface ResponseStore {
  /** The response, unless unknown or expired at `now`. */
  get(id: string, now: number): StoredResponse | undefined;
  /** Stores (or replaces) a response. */
  put(response: StoredResponse): void;
  /** Removes a response; false when there was none. */
  delete(id: string): boolean;
  /** Removes every response expired at `now`; returns how many. */
  prune(now: number): number;
}
