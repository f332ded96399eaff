import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { MemorySessionStore } from "../../sessions/memory-session-store.js";
import { SqliteState } from "../../sessions/sqlite-state.js";
import { sessionStoreContract } from "./session-store.contract.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

sessionStoreContract("SqliteState(:memory:).sessions", (options) => {
  const state = SqliteState.open(":memory:", options);
  cleanups.push(() => state.close());
  return state.sessions;
});

sessionStoreContract("SqliteState(file).sessions", (options) => {
  const dir = mkdtempSync(join(tmpdir(), "herald-sessions-"));
  const state = SqliteState.open(join(dir, "state.db"), options);
  cleanups.push(() => {
    state.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return state.sessions;
});

// As the gateway opens it: histories cached in memory, commits batched per event-loop turn.
sessionStoreContract("SqliteState(file, history cache, group commit).sessions", (options) => {
  const dir = mkdtempSync(join(tmpdir(), "herald-sessions-"));
  const state = SqliteState.open(join(dir, "state.db"), {
    ...options,
    historyCacheBytes: 1024 * 1024,
    groupCommit: true,
  });
  cleanups.push(() => {
    state.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return state.sessions;
});

sessionStoreContract("MemorySessionStore", (options) => new MemorySessionStore(options));
