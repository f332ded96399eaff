/**
 * The first stage of recall by meaning: every stored message vector reduced to its sign bits (one bit
 * per dimension) in memory, scanned by Hamming distance to pick a pool of candidates that the store
 * then ranks exactly by cosine from the full vectors in SQLite. At 256 dimensions a million messages
 * take 32 MB here and one scan about 40 ms on one core (BENCHMARKS.md); the full vectors never leave
 * the file.
 */

/** Sign bits of `vector` packed into 32-bit words (bit k set when `vector[k] > 0`). */
export function signBits(vector: Float32Array): Uint32Array {
  const words = new Uint32Array(Math.ceil(vector.length / 32));
  for (let k = 0; k < vector.length; k++) {
    if ((vector[k] ?? 0) > 0) words[k >>> 5] = (words[k >>> 5] ?? 0) | (1 << (k & 31));
  }
  return words;
}

/** One vector as the index keeps it: its message, its session and its sign bits. */
export interface IndexEntry {
  messageId: number;
  sessionId: string;
  bits: Uint32Array;
}

/**
 * Sign bits of message vectors by message id, with each message's session so a search scans only the
 * sessions its caller may see. Not thread-safe and not durable: it is a cache of `message_vectors`.
 */
export class BinaryVectorIndex {
  readonly #words: number;
  #bits: Uint32Array;
  #messageIds: Float64Array;
  #sessionOf: Int32Array;
  #size = 0;
  /** Ordinal of each session id (ordinals index `#sessionOf`). */
  readonly #sessionOrdinals = new Map<string, number>();

  constructor(dimensions: number, initialCapacity = 1024) {
    this.#words = Math.ceil(dimensions / 32);
    this.#bits = new Uint32Array(initialCapacity * this.#words);
    this.#messageIds = new Float64Array(initialCapacity);
    this.#sessionOf = new Int32Array(initialCapacity);
  }

  /** Vectors held. */
  get size(): number {
    return this.#size;
  }

  /**
   * Adds the vector of `entry.messageId`. A message embedded again (its text edited) gets a second slot:
   * the old bits may still bring it into a pool, where the exact stage ranks it by its current vector
   * (no map from message to slot: at a million vectors it would outweigh the bits).
   */
  add(entry: IndexEntry): void {
    const slot = this.#size++;
    if (slot >= this.#messageIds.length) this.#grow();
    this.#bits.set(entry.bits.subarray(0, this.#words), slot * this.#words);
    this.#messageIds[slot] = entry.messageId;
    this.#sessionOf[slot] = this.#ordinal(entry.sessionId);
  }

  /**
   * Up to `count` message ids nearest to `query`'s sign bits, among the messages of `sessions` only
   * (nearest first; ties in slot order).
   */
  nearest(query: Uint32Array, sessions: Iterable<string>, count: number): number[] {
    const allowed = new Uint8Array(this.#sessionOrdinals.size);
    let any = false;
    for (const id of sessions) {
      const ordinal = this.#sessionOrdinals.get(id);
      if (ordinal !== undefined) {
        allowed[ordinal] = 1;
        any = true;
      }
    }
    if (!any || count <= 0) return [];
    const words = this.#words;
    const bits = this.#bits;
    const sessionOf = this.#sessionOf;
    const ids = this.#messageIds;
    const size = this.#size;
    // Counting sort over distances: one pass to measure, one to collect the nearest. Locals and `!`
    // keep the loop free of property lookups and undefined checks (it runs once per stored vector).
    const distances = new Uint16Array(size);
    const missing = words * 32 + 1;
    const histogram = new Uint32Array(missing + 1);
    for (let slot = 0; slot < size; slot++) {
      if (allowed[sessionOf[slot]!] !== 1) {
        distances[slot] = missing;
        continue;
      }
      let d = 0;
      const base = slot * words;
      for (let w = 0; w < words; w++) {
        let x = bits[base + w]! ^ query[w]!;
        x -= (x >>> 1) & 0x55555555;
        x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
        d += (Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
      }
      distances[slot] = d;
      histogram[d]!++;
    }
    let cutoff = 0;
    for (let taken = 0; cutoff < missing && taken < count; cutoff++) taken += histogram[cutoff]!;
    const picked: { id: number; d: number }[] = [];
    for (let slot = 0; slot < size; slot++) {
      const d = distances[slot]!;
      if (d < cutoff) picked.push({ id: ids[slot]!, d });
    }
    picked.sort((a, b) => a.d - b.d);
    return [...new Set(picked.map((p) => p.id))].slice(0, count);
  }

  #ordinal(sessionId: string): number {
    let ordinal = this.#sessionOrdinals.get(sessionId);
    if (ordinal === undefined) {
      ordinal = this.#sessionOrdinals.size;
      this.#sessionOrdinals.set(sessionId, ordinal);
    }
    return ordinal;
  }

  #grow(): void {
    const capacity = this.#messageIds.length * 2;
    const bits = new Uint32Array(capacity * this.#words);
    bits.set(this.#bits);
    this.#bits = bits;
    const ids = new Float64Array(capacity);
    ids.set(this.#messageIds);
    this.#messageIds = ids;
    const sessions = new Int32Array(capacity);
    sessions.set(this.#sessionOf);
    this.#sessionOf = sessions;
  }
}
