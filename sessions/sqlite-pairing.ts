import { createHash, randomInt } from "node:crypto";
import type Database from "better-sqlite3";
import type { PairingRequest, PairingStore } from "./types.js";

/** Code characters: upper-case letters and digits without look-alikes (0/O, 1/I/L). */
export const PAIRING_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";
/** Characters in a pairing code. */
export const PAIRING_CODE_LENGTH = 8;
/** How long a code is valid. */
export const PAIRING_CODE_TTL_MS = 60 * 60_000;
/** A user gets at most one code per this interval. */
export const PAIRING_USER_INTERVAL_MS = 10 * 60_000;
/** At most this many unexpired codes are pending at once. */
export const PAIRING_MAX_PENDING = 10;

type IssueResult = ReturnType<PairingStore["issue"]>;

interface CodeRow {
  platform: string;
  user_id: string;
  user_name: string | null;
  chat_id: string;
  created_at: number;
  expires_at: number;
}

/** SHA-256 of the code as users may type it: case and separators do not matter. */
function hashCode(code: string): string {
  const normalized = code.replace(/[\s-]/g, "").toUpperCase();
  return createHash("sha256").update(normalized).digest("hex");
}

function newCode(): string {
  let code = "";
  for (let i = 0; i < PAIRING_CODE_LENGTH; i++) code += PAIRING_ALPHABET[randomInt(PAIRING_ALPHABET.length)];
  return code;
}

/**
 * `PairingStore` on `pairing_codes` and `pairing_approved`. Codes are stored only as SHA-256 hashes;
 * the plain code exists only in `issue`'s return value.
 */
export class SqlitePairing implements PairingStore {
  readonly #db: Database.Database;
  readonly #stmt;
  readonly #issueTx;
  readonly #approveTx;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#stmt = {
      userLatest: db.prepare<[string, string, number], { created_at: number }>(
        `SELECT created_at FROM pairing_codes WHERE platform = ? AND user_id = ? AND expires_at > ?
         ORDER BY created_at DESC LIMIT 1`,
      ),
      othersPending: db.prepare<[number, string, string], { n: number; soonest: number | null }>(
        `SELECT count(*) AS n, min(expires_at) AS soonest FROM pairing_codes
         WHERE expires_at > ? AND NOT (platform = ? AND user_id = ?)`,
      ),
      deleteUser: db.prepare<[string, string]>(
        "DELETE FROM pairing_codes WHERE platform = ? AND user_id = ?",
      ),
      deleteExpired: db.prepare<[number]>("DELETE FROM pairing_codes WHERE expires_at <= ?"),
      insert: db.prepare(
        `INSERT INTO pairing_codes (code_hash, platform, user_id, user_name, chat_id, created_at, expires_at)
         VALUES (@hash, @platform, @userId, @userName, @chatId, @now, @expiresAt)`,
      ),
      pending: db.prepare<[number], CodeRow>(
        "SELECT * FROM pairing_codes WHERE expires_at > ? ORDER BY created_at, rowid",
      ),
      byHash: db.prepare<[string, number], CodeRow>(
        "SELECT * FROM pairing_codes WHERE code_hash = ? AND expires_at > ?",
      ),
      approve: db.prepare<[string, string, number]>(
        `INSERT INTO pairing_approved (platform, user_id, approved_at) VALUES (?, ?, ?)
         ON CONFLICT DO UPDATE SET approved_at = excluded.approved_at`,
      ),
      revoke: db.prepare<[string, string]>("DELETE FROM pairing_approved WHERE platform = ? AND user_id = ?"),
      isApproved: db.prepare<[string, string], { one: number }>(
        "SELECT 1 AS one FROM pairing_approved WHERE platform = ? AND user_id = ?",
      ),
      approved: db.prepare<[], { platform: string; user_id: string; approved_at: number }>(
        "SELECT * FROM pairing_approved ORDER BY approved_at, platform, user_id",
      ),
    };
    this.#issueTx = db.transaction(this.#issueInTx.bind(this));
    this.#approveTx = db.transaction(this.#approveInTx.bind(this));
  }

  /**
   * A fresh 8-character code, valid for an hour, replacing the user's older one. Rate-limited (see
   * `PairingStore.issue`): the result is then `{ limited: true, retryAfterMs }` and nothing changes.
   */
  issue(request: Omit<PairingRequest, "createdAt" | "expiresAt">, now: number = Date.now()): IssueResult {
    return this.#issueTx.immediate(request, now);
  }

  #issueInTx(request: Omit<PairingRequest, "createdAt" | "expiresAt">, now: number): IssueResult {
    const { platform, userId } = request;
    const latest = this.#stmt.userLatest.get(platform, userId, now);
    if (latest && now - latest.created_at < PAIRING_USER_INTERVAL_MS) {
      return { limited: true, retryAfterMs: latest.created_at + PAIRING_USER_INTERVAL_MS - now };
    }
    const others = this.#stmt.othersPending.get(now, platform, userId)!;
    if (others.n >= PAIRING_MAX_PENDING) {
      return { limited: true, retryAfterMs: Math.max(1, (others.soonest ?? now) - now) };
    }
    this.#stmt.deleteUser.run(platform, userId);
    this.#stmt.deleteExpired.run(now);
    const code = newCode();
    const expiresAt = now + PAIRING_CODE_TTL_MS;
    this.#stmt.insert.run({
      hash: hashCode(code),
      platform,
      userId,
      userName: request.userName ?? null,
      chatId: request.chatId,
      now,
      expiresAt,
    });
    return { code, expiresAt };
  }

  pending(now: number = Date.now()): PairingRequest[] {
    return this.#stmt.pending.all(now).map((row) => {
      const request: PairingRequest = {
        platform: row.platform,
        userId: row.user_id,
        chatId: row.chat_id,
        createdAt: row.created_at,
        expiresAt: row.expires_at,
      };
      if (row.user_name !== null) request.userName = row.user_name;
      return request;
    });
  }

  /** Case-insensitive and one-time: the code (and any other of the same user) is gone afterwards. */
  approve(code: string, now: number = Date.now()): { platform: string; userId: string } | undefined {
    return this.#approveTx.immediate(code, now);
  }

  #approveInTx(code: string, now: number): { platform: string; userId: string } | undefined {
    const row = this.#stmt.byHash.get(hashCode(code), now);
    if (!row) return undefined;
    this.#stmt.deleteUser.run(row.platform, row.user_id);
    this.#stmt.approve.run(row.platform, row.user_id, now);
    return { platform: row.platform, userId: row.user_id };
  }

  allow(platform: string, userId: string): void {
    this.#db
      .transaction(() => {
        this.#stmt.deleteUser.run(platform, userId);
        this.#stmt.approve.run(platform, userId, Date.now());
      })
      .immediate();
  }

  /** Drops the pending request of a user without admitting them; false when there was none. */
  deny(platform: string, userId: string): boolean {
    return this.#stmt.deleteUser.run(platform, userId).changes > 0;
  }

  /** False when the user was not approved. */
  revoke(platform: string, userId: string): boolean {
    return this.#stmt.revoke.run(platform, userId).changes === 1;
  }

  isApproved(platform: string, userId: string): boolean {
    return this.#stmt.isApproved.get(platform, userId) !== undefined;
  }

  approved(): { platform: string; userId: string; approvedAt: number }[] {
    return this.#stmt.approved
      .all()
      .map((r) => ({ platform: r.platform, userId: r.user_id, approvedAt: r.approved_at }));
  }
}
