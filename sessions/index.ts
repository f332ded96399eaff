/** Durable state: the SQLite implementation of the sessions contracts and the in-memory session store. */
export { MemorySessionStore } from "./memory-session-store.js";
export { LATEST_SCHEMA_VERSION, migrate, migrations, schemaVersion } from "./migrations.js";
export { DEFAULT_RESET_POLICY, staleReason } from "./reset-policy.js";
export { SqliteKv } from "./sqlite-kv.js";
export { SqliteLedger } from "./sqlite-ledger.js";
export { type McpToolCacheRow, SqliteMcpToolCache } from "./sqlite-mcp-tool-cache.js";
export {
  type MessageVectorsOptions,
  type PendingMessage,
  SqliteMessageVectors,
  type VectorHit,
} from "./sqlite-message-vectors.js";
export { SqliteOutbox, type SqliteOutboxOptions } from "./sqlite-outbox.js";
export {
  PAIRING_ALPHABET,
  PAIRING_CODE_LENGTH,
  PAIRING_CODE_TTL_MS,
  SqlitePairing,
} from "./sqlite-pairing.js";
export { SqliteResponseStore } from "./sqlite-responses.js";
export { SqliteSessionStore, type SqliteSessionStoreOptions } from "./sqlite-session-store.js";
export { SqliteState, type SqliteStateOptions } from "./sqlite-state.js";
export {
  formatTask,
  formatTaskLine,
  SqliteTaskBoard,
  type TaskRecord,
  type TaskState,
} from "./sqlite-task-board.js";
export { SqliteTurnJournal } from "./sqlite-turn-journal.js";
export { SqliteUsageLedger, UNKNOWN_AGENT } from "./sqlite-usage.js";
export {
  type GenerationEntry,
  type GenerationRecord,
  SqliteWorkspaceGenerations,
} from "./sqlite-workspace-generations.js";
export type * from "./types.js";
export { BinaryVectorIndex, signBits } from "./vector-index.js";
