/**
 * `PromptBuilder`: the system prompt of each turn, with the sections that change between sessions
 * (memory, the skills index) taken once, when a session's first turn is built, and reused for every
 * later turn of that session. The prompt prefix stays the same within a session (providers cache it)
 * and a memory write shows up from the next session on. Snapshots live in a key-value store keyed by
 * session key, so a restart mid-session keeps them and there is at most one per chat. Within a session,
 * each scope (whose memory a turn reads: the owners', or one user's) has sections of its own, so a
 * session several people share never shows one person's memory to another.
 */
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { isSharedGroup } from "../core/speakers.js";
import type { TurnRecord } from "../core/turn.js";
import type { ChatType, GroupSessionMode, KeyValueStore } from "../core/types.js";
import { buildSystemPrompt, compactAscii, describeNow } from "./prompt.js";

export interface PromptBuilderOptions {
  /** Replaces the default persona. */
  persona?: string | undefined;
  /** IANA zone the date is stated in. */
  timezone: string;
  /** Each platform's prompt hint (from its module), by platform name. */
  hints?: Readonly<Record<string, string>> | undefined;
  /**
   * How group sessions are keyed: in `shared` ones messages carry sender tags and the prompt names
   * nobody (it stays the same whoever speaks). @defaultValue "per_user"
   */
  groupSessions?: GroupSessionMode | undefined;
  /** Where snapshots are kept (the runner state's `kv("prompt-snapshots")`). */
  snapshots: KeyValueStore;
  /**
   * The sections to snapshot for a new session, in order. Runs synchronously inside the runner's
   * transaction. May throw: the error is logged and the session gets no extra sections.
   */
  sections(turn: TurnRecord): string[];
  /**
   * Whose sections a turn gets (its memory's scope); turns of one session in different scopes get
   * sections of their own, each taken at the scope's first turn. Same contract as `sections`.
   * @defaultValue one scope, `""`
   */
  scope?: ((turn: TurnRecord) => string) | undefined;
  /**
   * The session's identity text (SOUL.md or the chat's personality), taken with the sections and
   * replacing `persona` for the whole session; undefined keeps `persona`. Same contract as `sections`.
   */
  identity?: ((turn: TurnRecord) => string | undefined) | undefined;
  logger: Logger;
}

/** The sections of one scope of a session. */
interface ScopeSnapshot {
  sections: string[];
  /** The identity taken for the session, when it replaces the configured persona. */
  persona?: string | undefined;
  /** The prompt last built from it (memory only), and what else it was built from. */
  built?: { key: string; prompt: string } | undefined;
}

interface Snapshot {
  sessionId: string;
  /**
   * When the snapshot was taken (the session's first turn): the date line states this time for the
   * whole session, so the prompt prefix stays byte-stable across hours (snapshots of older builds have
   * none and follow each turn's hour).
   */
  takenAt?: number | undefined;
  /** By scope (snapshots of older builds hold one, the default scope `""`). */
  scopes: Record<string, ScopeSnapshot>;
}

/** Sessions whose snapshot is also kept in memory (the store stays the durable copy). */
const MEMORY_SNAPSHOTS = 256;

export class PromptBuilder {
  readonly #options: PromptBuilderOptions;
  /** Recent snapshots by session key, so a turn does not read and parse its snapshot again. */
  readonly #recent = new Map<string, Snapshot>();

  readonly #persona: string | undefined;

  constructor(options: PromptBuilderOptions) {
    this.#options = options;
    this.#persona = options.persona === undefined ? undefined : compactAscii(options.persona);
  }

  /**
   * The system prompt of `turn` (the runner's `systemPrompt` option). A session's turns get the same
   * string, built once (its date line is the session's start); in a DM or a per-user group session it
   * names the speaker, in a shared group session nobody.
   */
  readonly build = (turn: TurnRecord, chatType: ChatType): string => {
    const { snapshot, scope } = this.#snapshot(turn);
    const senderTags = isSharedGroup(chatType, this.#options.groupSessions ?? "per_user");
    const userName = senderTags ? undefined : turn.inbound?.sender.name;
    const at = snapshot.takenAt ?? turn.createdAt;
    const key = `${turn.chat.platform}\u0000${chatType}\u0000${userName ?? ""}\u0000${describeNow(at, this.#options.timezone)}`;
    if (scope.built?.key === key) return scope.built.prompt;
    const prompt = buildSystemPrompt({
      persona: scope.persona ?? this.#persona,
      platform: turn.chat.platform,
      platformHint: this.#options.hints?.[turn.chat.platform],
      chatType,
      userName,
      senderTags,
      now: at,
      timezone: this.#options.timezone,
      extra: scope.sections,
    });
    scope.built = { key, prompt };
    return prompt;
  };

  /**
   * Drops the snapshot of `sessionKey`: its next turn takes a new one (after /personality). Runs inside
   * the caller's transaction.
   */
  refresh(sessionKey: string): void {
    this.#recent.delete(sessionKey);
    this.#options.snapshots.delete(sessionKey);
  }

  /**
   * The session's snapshot and the turn's scope in it, the scope's sections taken now if this is its
   * first turn built in the session.
   */
  #snapshot(turn: TurnRecord): { snapshot: Snapshot; scope: ScopeSnapshot } {
    const { snapshots, logger } = this.#options;
    let scopeKey = "";
    try {
      scopeKey = this.#options.scope?.(turn) ?? "";
    } catch (err) {
      // No scope known: no sections rather than another scope's.
      logger.warn({ sessionId: turn.sessionId, error: describeError(err) }, "prompt scope failed");
      return { snapshot: { sessionId: turn.sessionId, scopes: {} }, scope: { sections: [] } };
    }
    let snapshot = this.#recent.get(turn.sessionKey);
    if (snapshot?.sessionId !== turn.sessionId) {
      const stored = parse(snapshots.get(turn.sessionKey));
      snapshot =
        stored?.sessionId === turn.sessionId
          ? stored
          : { sessionId: turn.sessionId, takenAt: turn.createdAt, scopes: {} };
      this.#remember(turn.sessionKey, snapshot);
    }
    const known = snapshot.scopes[scopeKey];
    if (known) return { snapshot, scope: known };
    const scope: ScopeSnapshot = { sections: [] };
    try {
      scope.sections = this.#options.sections(turn).map(compactAscii);
    } catch (err) {
      logger.warn({ sessionId: turn.sessionId, error: describeError(err) }, "prompt sections failed");
    }
    try {
      const identity = this.#options.identity?.(turn);
      if (identity) scope.persona = compactAscii(identity);
    } catch (err) {
      logger.warn({ sessionId: turn.sessionId, error: describeError(err) }, "prompt identity failed");
    }
    snapshot.scopes[scopeKey] = scope;
    snapshots.set(
      turn.sessionKey,
      JSON.stringify(snapshot, (k, v) => (k === "built" ? undefined : v)),
    );
    return { snapshot, scope };
  }

  #remember(sessionKey: string, snapshot: Snapshot): Snapshot {
    this.#recent.delete(sessionKey);
    this.#recent.set(sessionKey, snapshot);
    if (this.#recent.size > MEMORY_SNAPSHOTS) this.#recent.delete(this.#recent.keys().next().value!);
    return snapshot;
  }
}

function parse(raw: string | undefined): Snapshot | undefined {
  if (!raw) return undefined;
  try {
    const value = JSON.parse(raw) as Partial<Snapshot> & Partial<ScopeSnapshot>;
    if (typeof value.sessionId !== "string") return undefined;
    if (value.scopes && typeof value.scopes === "object")
      return { sessionId: value.sessionId, takenAt: value.takenAt, scopes: value.scopes };
    // An older build's snapshot: one set of sections, the default scope's.
    if (!Array.isArray(value.sections)) return undefined;
    const scope: ScopeSnapshot = { sections: value.sections, persona: value.persona };
    return { sessionId: value.sessionId, takenAt: value.takenAt, scopes: { "": scope } };
  } catch {
    return undefined;
  }
}
