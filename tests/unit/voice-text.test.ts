/** The pure parts of voice: splitting text for speech, recognising containers, retry-after. */
import { describe, expect, it } from "vitest";
import { parseRetryAfterMs, splitForSpeech } from "../../agent/tools/voice/index.js";
import { sniffFormat } from "../../agent/tools/voice/sniff.js";

describe("splitForSpeech", () => {
  it("keeps short text whole", () => {
    expect(splitForSpeech("  Hello there. How are you?  ", 4096)).toEqual(["Hello there. How are you?"]);
  });

  it("cuts between sentences, every piece under the limit, nothing lost", () => {
    const sentence = "Herald reads this sentence aloud for the test. ";
    const text = sentence.repeat(130); // 6,110 characters
    const pieces = splitForSpeech(text, 4096);
    expect(pieces).toHaveLength(2);
    for (const piece of pieces) {
      expect(piece.length).toBeLessThanOrEqual(4096);
      expect(piece.endsWith("test.")).toBe(true);
    }
    expect(pieces.join(" ")).toBe(text.trim());
  });

  it("cuts an over-long sentence between words and an over-long word anywhere", () => {
    expect(splitForSpeech("one two three four", 9)).toEqual(["one two", "three", "four"]);
    expect(splitForSpeech("abcdefghij", 4)).toEqual(["abcd", "efgh", "ij"]);
  });

  it("gives nothing for blank text", () => {
    expect(splitForSpeech(" \n ", 10)).toEqual([]);
  });
});

describe("sniffFormat", () => {
  const bytes = (...parts: (string | number[])[]) =>
    Uint8Array.from(parts.flatMap((p) => (typeof p === "string" ? [...Buffer.from(p, "latin1")] : p)));

  it("recognises the containers providers accept", () => {
    expect(sniffFormat(bytes("OggS", [0, 2]))?.ext).toBe("ogg");
    expect(sniffFormat(bytes("ID3", [4, 0]))?.ext).toBe("mp3");
    expect(sniffFormat(bytes([0xff, 0xfb, 0x90, 0x64]))?.ext).toBe("mp3");
    expect(sniffFormat(bytes("RIFF", [0, 0, 0, 0], "WAVE"))?.ext).toBe("wav");
    expect(sniffFormat(bytes([0, 0, 0, 32], "ftypM4A "))).toEqual({ ext: "m4a", mime: "audio/mp4" });
    expect(sniffFormat(bytes("fLaC"))?.ext).toBe("flac");
  });

  it("leaves the rest to ffmpeg (AIFF, 3GPP/AMR, unknown)", () => {
    expect(sniffFormat(bytes("FORM", [0, 0, 0, 0], "AIFF"))).toBeUndefined();
    expect(sniffFormat(bytes([0, 0, 0, 32], "ftyp3gp4"))).toBeUndefined();
    expect(sniffFormat(bytes("#!AMR\n"))).toBeUndefined();
  });
});

describe("parseRetryAfterMs", () => {
  it("reads seconds and HTTP dates", () => {
    expect(parseRetryAfterMs("2")).toBe(2000);
    expect(parseRetryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(parseRetryAfterMs(null)).toBeUndefined();
    expect(parseRetryAfterMs("soon")).toBeUndefined();
  });
});
