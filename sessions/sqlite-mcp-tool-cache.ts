/**
 * The MCP servers' cached tool lists in `state.db` (table `mcp_tool_cache`, migration v8): per server
 * the hash of its definition, its last `tools/list` answer as JSON, and when it was listed. One row per
 * server: a changed definition replaces the row, and a lookup with another hash finds nothing. `retain`
 * deletes the rows of servers no longer configured as they were (removed, or their definition changed).
 */
import type Database from "better-sqlite3";

/** A cached tool list. */
export interface McpToolCacheRow {
  /** The `tools/list` answer as the MCP client stored it (JSON). */
  readonly tools: string;
  /** When it was listed (epoch ms). */
  readonly listedAt: number;
}

interface Row {
  tools: string;
  listed_at: number;
}

/** See the module comment. */
export class SqliteMcpToolCache {
  readonly #get: Database.Statement<[string, string], Row>;
  readonly #put: Database.Statement<[string, string, string, number]>;
  readonly #now: () => number;
  readonly #db: Database.Database;

  constructor(db: Database.Database, options: { now?: () => number } = {}) {
    this.#now = options.now ?? Date.now;
    this.#db = db;
    this.#get = db.prepare("SELECT tools, listed_at FROM mcp_tool_cache WHERE server = ? AND definition = ?");
    this.#put = db.prepare(
      `INSERT INTO mcp_tool_cache (server, definition, tools, listed_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (server) DO UPDATE SET definition = excluded.definition, tools = excluded.tools,
         listed_at = excluded.listed_at`,
    );
  }

  /** The list cached for `server` under `definition` (its hash), or undefined. */
  get(server: string, definition: string): McpToolCacheRow | undefined {
    const row = this.#get.get(server, definition);
    return row ? { tools: row.tools, listedAt: row.listed_at } : undefined;
  }

  /** Stores `tools` (JSON) as `server`'s list under `definition`, listed now. */
  put(server: string, definition: string, tools: string): void {
    this.#put.run(server, definition, tools, this.#now());
  }

  /**
   * Deletes every row but those of `servers` under their current definition (hash): the lists of
   * servers removed from the configuration, or whose definition changed. Returns the names deleted.
   */
  retain(servers: readonly { server: string; definition: string }[]): string[] {
    const keep = new Set(servers.map((s) => JSON.stringify([s.server, s.definition])));
    return this.#db.transaction(() => {
      const rows = this.#db.prepare("SELECT server, definition FROM mcp_tool_cache").all() as {
        server: string;
        definition: string;
      }[];
      const gone = rows.filter((r) => !keep.has(JSON.stringify([r.server, r.definition])));
      const remove = this.#db.prepare("DELETE FROM mcp_tool_cache WHERE server = ? AND definition = ?");
      for (const r of gone) remove.run(r.server, r.definition);
      return gone.map((r) => r.server);
    })();
  }
}
