/** Spoken-reply files are deleted once old: the outbox delivered them long ago. */
import { existsSync, mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { pruneSpeechFiles } from "../../voice/index.js";

describe("pruneSpeechFiles", () => {
  it("deletes files older than the kept time and keeps newer ones", async () => {
    const dir = mkdtempSync(join(tmpdir(), "herald-speech-prune-"));
    const old = join(dir, "herald-speech-old.ogg");
    const fresh = join(dir, "herald-speech-new.ogg");
    writeFileSync(old, "OggS");
    writeFileSync(fresh, "OggS");
    const twoDaysAgo = (Date.now() - 2 * 86_400_000) / 1000;
    utimesSync(old, twoDaysAgo, twoDaysAgo);
    expect(await pruneSpeechFiles(dir, 86_400_000)).toBe(1);
    expect(existsSync(old)).toBe(false);
    expect(existsSync(fresh)).toBe(true);
    expect(await pruneSpeechFiles(join(dir, "missing"), 1)).toBe(0);
  });
});
