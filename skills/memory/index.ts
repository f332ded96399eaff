/**
 * Memory: MEMORY.md and USER.md, one pair for the owners and one per other user (`ScopedMemoryStore`
 * decides by caller), their content guard (no secrets, no injected instructions) and atomic writes
 * under a lock.
 */
export { withFileLock, writeFileAtomic } from "./atomic.js";
export { checkContent, findInjection, findSecret } from "./guard.js";
export { type MemoryScope, type ScopedMemoryOptions, ScopedMemoryStore, userMemoryKey } from "./scoped.js";
export { ENTRY_DELIMITER, FileMemoryStore, type FileMemoryStoreOptions, parseEntries } from "./store.js";
export type * from "./types.js";
