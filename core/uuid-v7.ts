/**
 * UUIDs of version 7 (RFC 9562): a millisecond timestamp, then random bits, so ids sort by creation
 * time. Within one millisecond a 32-bit counter (seeded at random each new millisecond) keeps the ids
 * of this process increasing; when it wraps, the timestamp moves on by one. The same layout and
 * ordering as the `uuid` package's `v7()`, without loading its 21 modules at start.
 */
import { randomFillSync } from "node:crypto";

const state = { msecs: Number.NEGATIVE_INFINITY, seq: 0 };
const random = new Uint8Array(16);
const HEX = Array.from({ length: 256 }, (_, i) => (i + 0x100).toString(16).slice(1));

/** A new UUIDv7, later in sort order than every earlier one of this process. */
export function uuidv7(): string {
  const now = Date.now();
  const r = randomFillSync(random);
  if (now > state.msecs) {
    state.seq = (r[6]! << 23) | (r[7]! << 16) | (r[8]! << 8) | r[9]!;
    state.msecs = now;
  } else {
    state.seq = (state.seq + 1) | 0;
    if (state.seq === 0) state.msecs++;
  }
  const { msecs, seq } = state;
  const b = [
    (msecs / 0x10000000000) & 0xff,
    (msecs / 0x100000000) & 0xff,
    (msecs / 0x1000000) & 0xff,
    (msecs / 0x10000) & 0xff,
    (msecs / 0x100) & 0xff,
    msecs & 0xff,
    0x70 | ((seq >>> 28) & 0x0f),
    (seq >>> 20) & 0xff,
    0x80 | ((seq >>> 14) & 0x3f),
    (seq >>> 6) & 0xff,
    ((seq << 2) & 0xff) | (r[10]! & 0x03),
    r[11]!,
    r[12]!,
    r[13]!,
    r[14]!,
    r[15]!,
  ].map((byte) => HEX[byte]!);
  return `${b.slice(0, 4).join("")}-${b.slice(4, 6).join("")}-${b.slice(6, 8).join("")}-${b.slice(8, 10).join("")}-${b.slice(10).join("")}`;
}
