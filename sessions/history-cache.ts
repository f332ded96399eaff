/**
 * The histories `SqliteSessionStore.load` returned lately, kept in step with `append`, so a session's
 * next turn does not read (and rebuild) every message again. Internal to `sessions/`: the store keeps it
 * consistent (appends extend an entry, compactions drop it) and `SqliteState` clears it whenever a
 * transaction rolls back. Bounded by size, least recently used first out.
 */
import type { StoredMessage } from "./types.js";

/** Heap bytes of one cached message besides its text (measured: ~330 for a short one). */
const MESSAGE_OVERHEAD = 320;

interface Entry {
  messages: StoredMessage[];
  /** Seq of the last stored message (not the compaction summary), to catch an append that skips one. */
  lastSeq: number;
  bytes: number;
}

export class HistoryCache {
  readonly #entries = new Map<string, Entry>();
  readonly #maxBytes: number;
  #bytes = 0;

  /** @param maxBytes approximate budget (text length plus a fixed overhead per message) */
  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** A copy of the cached history (the messages themselves are shared: read-only), or undefined. */
  get(sessionId: string): StoredMessage[] | undefined {
    const entry = this.#entries.get(sessionId);
    if (!entry) return undefined;
    this.#entries.delete(sessionId);
    this.#entries.set(sessionId, entry);
    return entry.messages.slice();
  }

  /** Caches a history just read; one larger than a quarter of the budget is not kept (nor any at 0). */
  set(sessionId: string, messages: StoredMessage[], lastSeq: number): void {
    this.delete(sessionId);
    const bytes = sizeOf(messages);
    if (this.#maxBytes <= 0 || bytes > this.#maxBytes / 4) return;
    this.#entries.set(sessionId, { messages: messages.slice(), lastSeq, bytes });
    this.#bytes += bytes;
    this.#evict();
  }

  /**
   * Extends a cached history by messages appended after seq `afterSeq`; an entry that does not end
   * there (something else wrote) is dropped instead.
   */
  append(sessionId: string, afterSeq: number, added: StoredMessage[]): void {
    const entry = this.#entries.get(sessionId);
    if (!entry || added.length === 0) return;
    if (entry.lastSeq !== afterSeq) {
      this.delete(sessionId);
      return;
    }
    const bytes = sizeOf(added);
    entry.messages.push(...added);
    entry.lastSeq = added[added.length - 1]!.seq;
    entry.bytes += bytes;
    this.#bytes += bytes;
    if (entry.bytes > this.#maxBytes / 4) this.delete(sessionId);
    this.#evict();
  }

  delete(sessionId: string): void {
    const entry = this.#entries.get(sessionId);
    if (!entry) return;
    this.#entries.delete(sessionId);
    this.#bytes -= entry.bytes;
  }

  clear(): void {
    this.#entries.clear();
    this.#bytes = 0;
  }

  #evict(): void {
    for (const [sessionId] of this.#entries) {
      if (this.#bytes <= this.#maxBytes) return;
      this.delete(sessionId);
    }
  }
}

function sizeOf(messages: StoredMessage[]): number {
  let bytes = 0;
  for (const { message } of messages) {
    bytes += MESSAGE_OVERHEAD + (typeof message.content === "string" ? message.content.length : 0);
    if (message.role === "assistant" && message.tool_calls) {
      for (const call of message.tool_calls) bytes += MESSAGE_OVERHEAD + call.function.arguments.length;
    }
  }
  return bytes;
}
