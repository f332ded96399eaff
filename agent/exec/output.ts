/**
 * Output capping. A command's output is kept as a small head plus the tail (the end of a build log or
 * a test run is what matters), and the exact number of characters dropped in between is counted.
 */

/** The marker placed where characters were dropped. */
export function droppedMarker(droppedChars: number): string {
  return `\n[… ${droppedChars} characters dropped …]\n`;
}

/** Keeps the first `headChars` and the last `tailChars` characters written to it. */
export class HeadTailBuffer {
  private head = "";
  private tail: string[] = [];
  private tailLength = 0;
  private dropped = 0;

  /**
   * @param maxChars the whole budget, head and tail together.
   * @param headChars the part of the budget kept from the start. @defaultValue a tenth, at most 2,000
   */
  constructor(
    readonly maxChars: number,
    readonly headChars: number = Math.min(2_000, Math.floor(maxChars / 10)),
  ) {}

  /** Appends a chunk. */
  push(chunk: string): void {
    let rest = chunk;
    if (this.head.length < this.headChars) {
      const room = this.headChars - this.head.length;
      this.head += rest.slice(0, room);
      rest = rest.slice(room);
    }
    if (!rest) return;
    this.tail.push(rest);
    this.tailLength += rest.length;
    const tailBudget = this.maxChars - this.headChars;
    while (this.tailLength > tailBudget) {
      const first = this.tail[0] ?? "";
      const excess = this.tailLength - tailBudget;
      if (first.length <= excess) {
        this.tail.shift();
        this.tailLength -= first.length;
        this.dropped += first.length;
      } else {
        this.tail[0] = first.slice(excess);
        this.tailLength -= excess;
        this.dropped += excess;
      }
    }
  }

  /** How many characters were dropped between head and tail. */
  get droppedChars(): number {
    return this.dropped;
  }

  /** The kept text, with a marker where characters were dropped. */
  text(): string {
    const tail = this.tail.join("");
    return this.dropped > 0 ? this.head + droppedMarker(this.dropped) + tail : this.head + tail;
  }
}

/**
 * A log with absolute character offsets that keeps only its last `maxChars` characters (a ring).
 * Offsets count from the first character ever written, so a reader's cursor stays valid as the
 * start is dropped.
 */
export class RingLog {
  private chunks: string[] = [];
  private length = 0;
  /** Absolute offset of the first character still kept. */
  private start = 0;

  constructor(readonly maxChars: number) {}

  append(chunk: string): void {
    if (!chunk) return;
    this.chunks.push(chunk);
    this.length += chunk.length;
    if (this.length > this.maxChars * 2) this.compact();
  }

  private compact(): void {
    const all = this.chunks.join("");
    const keep = all.slice(Math.max(0, all.length - this.maxChars));
    this.start += all.length - keep.length;
    this.chunks = [keep];
    this.length = keep.length;
  }

  /** Absolute offset just past the last character written. */
  get end(): number {
    return this.start + this.length;
  }

  /** Absolute offset of the oldest character still kept. */
  get firstKept(): number {
    this.compact();
    return this.start;
  }

  /**
   * Characters `[from, from + limit)`, clamped to what is kept. `skipped` counts the characters asked
   * for that were already dropped from the ring.
   */
  read(from: number, limit = Number.POSITIVE_INFINITY): { text: string; from: number; skipped: number } {
    this.compact();
    const begin = Math.max(from, this.start);
    const all = this.chunks.join("");
    const text = all.slice(begin - this.start, Math.min(all.length, begin - this.start + limit));
    return { text, from: begin, skipped: Math.max(0, this.start - from) };
  }
}
