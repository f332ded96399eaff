/**
 * Contracts of the agent's memory: two bounded files of entries (`MEMORY.md`, the agent's notes about
 * its environment and lessons; `USER.md`, what it knows about the user). The owners share one pair under
 * `HERALD_HOME/memories/`; every other user has a pair of their own under `memories/users/<user>/`.
 * `MemoryFiles` is one pair; `MemoryStateApi` is what tools reach (in-process or over HTTP): each call
 * names its caller, and the gateway picks the caller's pair.
 */
import type { Caller } from "../../core/access.js";

/** Which file: `memory` is MEMORY.md (the agent's notes), `user` is USER.md (the user profile). */
export type MemoryTarget = "memory" | "user";

/** One file's entries as they are now. */
export interface MemoryView {
  target: MemoryTarget;
  entries: string[];
  /** Characters the entries take, delimiters included. */
  usedChars: number;
  limitChars: number;
}

/**
 * A write's outcome. Refusals (over the limit, a secret, an instruction, no unique match) are results,
 * not errors: `error` is phrased for the model and says what to do instead.
 */
export type MemoryWriteResult =
  | { ok: true; message: string; view: MemoryView }
  | { ok: false; error: string; view?: MemoryView | undefined };

/**
 * One pair of memory files. Writes are serialised and atomic; the prompt's snapshot is taken at a
 * session's start, so a write shows up in the system prompt from the next session on.
 */
export interface MemoryFiles {
  read(target: MemoryTarget): Promise<MemoryView>;
  /** Adds an entry. Refused over the limit, for duplicates, secrets and instructions to the system. */
  add(target: MemoryTarget, content: string): Promise<MemoryWriteResult>;
  /** Replaces the one entry containing `oldText` (a unique substring) with `content`. */
  replace(target: MemoryTarget, oldText: string, content: string): Promise<MemoryWriteResult>;
  /** Removes the one entry containing `oldText` (a unique substring). */
  remove(target: MemoryTarget, oldText: string): Promise<MemoryWriteResult>;
}

/**
 * What tools need of memory: the files of whom `caller` acts for (the owners' shared pair, or the user's
 * own). A caller that acts for nobody (a webhook's turn) has none: reads are empty, writes are refused.
 */
export interface MemoryStateApi {
  read(target: MemoryTarget, caller: Caller): Promise<MemoryView>;
  /** Adds an entry. Refused over the limit, for duplicates, secrets and instructions to the system. */
  add(target: MemoryTarget, content: string, caller: Caller): Promise<MemoryWriteResult>;
  /** Replaces the one entry containing `oldText` (a unique substring) with `content`. */
  replace(target: MemoryTarget, oldText: string, content: string, caller: Caller): Promise<MemoryWriteResult>;
  /** Removes the one entry containing `oldText` (a unique substring). */
  remove(target: MemoryTarget, oldText: string, caller: Caller): Promise<MemoryWriteResult>;
}
