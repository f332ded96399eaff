/**
 * `SqliteResponseStore`: the API server's stored responses (`/v1/responses` with `store`), in the
 * `api_responses` table (migration v5). A response is an opaque JSON body with the chat and user it
 * belongs to; it is readable until `expiresAt`, and `prune` removes what expired.
 */
import type Database from "better-sqlite3";
import type { ResponseStore, StoredResponse } from "./types.js";

interface Row {
  id: string;
  chat_id: string;
  user_id: string;
  body: string;
  created_at: number;
  expires_at: number;
}

export class SqliteResponseStore implements ResponseStore {
  readonly #get: Database.Statement<[string, number], Row>;
  readonly #put: Database.Statement;
  readonly #delete: Database.Statement<[string]>;
  readonly #prune: Database.Statement<[number]>;

  constructor(db: Database.Database) {
    this.#get = db.prepare("SELECT * FROM api_responses WHERE id = ? AND expires_at > ?");
    this.#put = db.prepare(
      `INSERT OR REPLACE INTO api_responses (id, chat_id, user_id, body, created_at, expires_at)
         VALUES (@id, @chatId, @userId, @body, @createdAt, @expiresAt)`,
    );
    this.#delete = db.prepare("DELETE FROM api_responses WHERE id = ?");
    this.#prune = db.prepare("DELETE FROM api_responses WHERE expires_at <= ?");
  }

  get(id: string, now: number): StoredResponse | undefined {
    const row = this.#get.get(id, now);
    if (!row) return undefined;
    return {
      id: row.id,
      chatId: row.chat_id,
      userId: row.user_id,
      body: row.body,
      createdAt: row.created_at,
      expiresAt: row.expires_at,
    };
  }

  put(response: StoredResponse): void {
    this.#put.run(response);
  }

  delete(id: string): boolean {
    return this.#delete.run(id).changes > 0;
  }

  prune(now: number): number {
    return this.#prune.run(now).changes;
  }
}
