/**
 * `SpeakerRoster`: who has spoken in each shared group session, under which label (`core/speakers.ts`).
 * A person keeps the label they first spoke under for the whole session (a later rename does not change
 * it, so earlier messages and new ones name the same person alike), and no two people share one.
 */
import { chooseLabel } from "../core/speakers.js";
import type { KeyValueStore } from "../core/types.js";

export class SpeakerRoster {
  readonly #kv: KeyValueStore;

  /** @param kv where rosters are kept, one per session id (the runner state's `kv("speakers")`). */
  constructor(kv: KeyValueStore) {
    this.#kv = kv;
  }

  /**
   * The label of `sender` in session `sessionId`, chosen and recorded on their first message there.
   * Runs inside the caller's transaction (the roster is written with the turn).
   */
  label(sessionId: string, platform: string, sender: { id: string; name?: string | undefined }): string {
    const roster = parseRoster(this.#kv.get(sessionId));
    const known = roster.get(sender.id);
    if (known) return known;
    const label = chooseLabel(sender.name, platform, sender.id, new Set(roster.values()));
    roster.set(sender.id, label);
    this.#kv.set(sessionId, JSON.stringify(Object.fromEntries(roster)));
    return label;
  }
}

/**
 * A stored roster, user id → label (a Map: a user id may be any string, `__proto__` included). Only
 * this class writes it; one that does not parse counts as empty (its people are labelled afresh).
 */
function parseRoster(raw: string | undefined): Map<string, string> {
  const roster = new Map<string, string>();
  if (!raw) return roster;
  try {
    const value: unknown = JSON.parse(raw);
    if (typeof value !== "object" || value === null) return roster;
    for (const [id, label] of Object.entries(value)) if (typeof label === "string") roster.set(id, label);
  } catch {
    // Not JSON: start a new roster, as above.
  }
  return roster;
}
