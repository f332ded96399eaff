/**
 * Per-session model settings (`/model`, `/reasoning`) over a key-value namespace, keyed by session key
 * and bound to one session id: a setting made before the session's first turn binds to the session
 * that turn opens, and a new session (/new, a reset) starts from the defaults.
 */
import type { KeyValueStore } from "../../core/types.js";
import type { SessionModelSettings } from "./types.js";

/** The kv namespace of the settings. */
export const SESSION_MODELS_NAMESPACE = "session-models";

interface Stored extends SessionModelSettings {
  /** The session they belong to; undefined until that session's first turn. */
  sessionId?: string | undefined;
}

export class SessionModelStore {
  constructor(private readonly kv: KeyValueStore) {}

  /**
   * The settings of `sessionId` (of `sessionKey`). With `bind`, settings made before the session existed
   * are bound to it now (the context source does this when a turn starts).
   */
  get(sessionKey: string, sessionId: string | undefined, bind = false): SessionModelSettings {
    const stored = this.#read(sessionKey);
    if (!stored) return {};
    if (stored.sessionId === undefined) {
      if (bind && sessionId) this.kv.set(sessionKey, JSON.stringify({ ...stored, sessionId }));
      return stored;
    }
    return stored.sessionId === sessionId ? stored : {};
  }

  /** Changes settings of the session (`sessionId` undefined: the session the next turn opens). */
  set(sessionKey: string, sessionId: string | undefined, patch: SessionModelSettings): SessionModelSettings {
    const current = this.get(sessionKey, sessionId);
    const next: Stored = { ...current, ...patch, sessionId };
    for (const k of ["model", "reasoning"] as const) if (next[k] === undefined) delete next[k];
    this.kv.set(sessionKey, JSON.stringify(next));
    return next;
  }

  #read(sessionKey: string): Stored | undefined {
    const raw = this.kv.get(sessionKey);
    if (!raw) return undefined;
    try {
      const value = JSON.parse(raw) as Stored;
      return value && typeof value === "object" ? value : undefined;
    } catch {
      return undefined;
    }
  }
}
