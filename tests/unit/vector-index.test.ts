/** The in-memory sign-bit index: nearest by Hamming distance, only in the sessions asked, growing. */
import { describe, expect, it } from "vitest";
import { BinaryVectorIndex, signBits } from "../../sessions/index.js";

/** A 64-dimension vector whose first `ones` dimensions are positive, the rest negative. */
function vector(ones: number): Float32Array {
  return Float32Array.from({ length: 64 }, (_, k) => (k < ones ? 1 : -1));
}

describe("BinaryVectorIndex", () => {
  it("returns the nearest first, only from the sessions asked, each message once", () => {
    const index = new BinaryVectorIndex(64, 2);
    for (let i = 0; i <= 64; i += 8)
      index.add({ messageId: i, sessionId: i % 16 === 0 ? "a" : "b", bits: signBits(vector(i)) });
    // Embedded again (edited): a second slot for the same message.
    index.add({ messageId: 16, sessionId: "a", bits: signBits(vector(30)) });
    expect(index.size).toBe(10);
    const query = signBits(vector(32));
    expect(index.nearest(query, ["a"], 3)).toEqual([32, 16, 48]);
    expect(index.nearest(query, ["b"], 2)).toEqual([24, 40]);
    expect(index.nearest(query, ["a", "b"], 100)).toHaveLength(9);
    expect(index.nearest(query, ["nobody"], 5)).toEqual([]);
    expect(index.nearest(query, ["a"], 0)).toEqual([]);
  });

  it("packs sign bits into 32-bit words, a bit per positive dimension", () => {
    const bits = signBits(Float32Array.from({ length: 40 }, (_, k) => (k === 0 || k === 33 ? 0.5 : -0.5)));
    expect([...bits]).toEqual([1, 2]);
  });
});
