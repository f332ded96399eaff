/**
 * `ScopedMemoryStore`: memory by whom a caller acts for. The owners share the pair of files under
 * `HERALD_HOME/memories/`; every other user (admitted by a pairing code or `GATEWAY_ALLOW_ALL_USERS`)
 * has a pair of their own under `memories/users/<platform>-<id>-<hash>/`, created on their first write,
 * with the same budgets and content checks. A user never reads or writes the owners' files or another
 * user's, so what one user saves never enters another's system prompt. A caller that acts for nobody (a
 * webhook's turn, whose input comes from outside) has no memory. A caller of another agent than the
 * default one (`Caller.agent`) reaches the same layout under that agent's folder (`agentDir`): agents
 * never read each other's memory.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Caller } from "../../core/access.js";
import type { Logger } from "../../core/logger.js";
import { FileMemoryStore } from "./store.js";
import type { MemoryStateApi, MemoryTarget, MemoryView, MemoryWriteResult } from "./types.js";

/** Whose memory a caller reaches: the owners' shared files, a user's own, or none. */
export type MemoryScope =
  | { kind: "owners" }
  | { kind: "user"; platform: string; userId: string }
  | { kind: "none"; reason: string };

/** Options of {@link ScopedMemoryStore}. */
export interface ScopedMemoryOptions {
  /** `HERALD_HOME/memories`: the owners' files; other users' under `users/`. */
  dir: string;
  /** Budget of each MEMORY.md in characters. @defaultValue 2200 */
  memoryChars?: number | undefined;
  /** Budget of each USER.md in characters. @defaultValue 1375 */
  userChars?: number | undefined;
  logger?: Logger | undefined;
  /** Whose memory `caller` reaches (the owner policy). Must not throw. */
  scopeOf(caller: Caller): MemoryScope;
  /**
   * The memory folder of a further agent, by name; undefined for an agent there is none of (its callers
   * then have no memory). Must not throw. @defaultValue no further agents
   */
  agentDir?: ((agent: string) => string | undefined) | undefined;
}

/** The folder under `memories/users/` of a user: readable, and unique by a hash of the exact id. */
export function userMemoryKey(platform: string, userId: string): string {
  const readable = userId.replace(/[^A-Za-z0-9_.@+-]/g, "_").slice(0, 40);
  const hash = createHash("sha256").update(`${platform}\u0000${userId}`).digest("hex").slice(0, 12);
  return `${platform.replace(/[^a-z0-9_-]/gi, "_")}-${readable}-${hash}`;
}

/** Memory for tools and prompts, by caller. */
export class ScopedMemoryStore implements MemoryStateApi {
  /** The owners' files (`memories/MEMORY.md`, `memories/USER.md`); the dashboard edits these. */
  readonly owners: FileMemoryStore;
  readonly #o: ScopedMemoryOptions;

  constructor(options: ScopedMemoryOptions) {
    this.#o = options;
    this.owners = this.#store(options.dir);
  }

  /** Where the other users' folders are. */
  get usersDir(): string {
    return join(this.#o.dir, "users");
  }

  /** The files `caller` reaches, or why it has none. */
  filesOf(caller: Caller): FileMemoryStore | { none: string } {
    const scope = this.#o.scopeOf(caller);
    if (scope.kind === "none") return { none: scope.reason };
    const dir = caller.agent ? this.#o.agentDir?.(caller.agent) : this.#o.dir;
    if (!dir) return { none: `the agent ${caller.agent} has no memory folder` };
    if (scope.kind === "owners") return dir === this.#o.dir ? this.owners : this.#store(dir);
    return this.#store(join(dir, "users", userMemoryKey(scope.platform, scope.userId)));
  }

  async read(target: MemoryTarget, caller: Caller): Promise<MemoryView> {
    const files = this.filesOf(caller);
    if ("none" in files) return { target, entries: [], usedChars: 0, limitChars: 0 };
    return files.read(target);
  }

  add(target: MemoryTarget, content: string, caller: Caller): Promise<MemoryWriteResult> {
    return this.#write(caller, (files) => files.add(target, content));
  }

  replace(
    target: MemoryTarget,
    oldText: string,
    content: string,
    caller: Caller,
  ): Promise<MemoryWriteResult> {
    return this.#write(caller, (files) => files.replace(target, oldText, content));
  }

  remove(target: MemoryTarget, oldText: string, caller: Caller): Promise<MemoryWriteResult> {
    return this.#write(caller, (files) => files.remove(target, oldText));
  }

  /** The prompt sections of `caller`'s memory (none for a caller without memory). */
  promptSections(caller: Caller): string[] {
    const files = this.filesOf(caller);
    return "none" in files ? [] : files.promptSections();
  }

  /** The users with a memory folder of their own (folder name and files), by folder name. */
  users(): { key: string; files: FileMemoryStore }[] {
    if (!existsSync(this.usersDir)) return [];
    return readdirSync(this.usersDir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort()
      .map((key) => ({ key, files: this.#store(join(this.usersDir, key)) }));
  }

  async #write(
    caller: Caller,
    write: (files: FileMemoryStore) => Promise<MemoryWriteResult>,
  ): Promise<MemoryWriteResult> {
    const files = this.filesOf(caller);
    if ("none" in files) return { ok: false, error: `refused: ${files.none}` };
    return write(files);
  }

  #store(dir: string): FileMemoryStore {
    const { memoryChars, userChars, logger } = this.#o;
    return new FileMemoryStore({ dir, memoryChars, userChars, logger });
  }
}
