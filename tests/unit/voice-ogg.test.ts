/** The in-process Ogg/Opus duration agrees with ffprobe on real voice notes. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { oggOpusDurationS } from "../../agent/tools/voice/ogg.js";
import { ffmpeg, ffprobe, makeVoiceNote } from "../fakes/speech/index.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "voice-ogg-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("oggOpusDurationS", () => {
  it("matches ffprobe on a short voice note and on 200 s of audio (many pages)", async () => {
    const note = await makeVoiceNote(dir);
    const long = join(dir, "long.ogg");
    await ffmpeg(["-f", "lavfi", "-i", "sine=f=440:d=200", "-c:a", "libopus", "-b:a", "16k", long]);
    for (const path of [note, long]) {
      // ffprobe counts the encoder's pre-skip (6.5 ms here), which is not heard; we leave it out.
      const expected = (await ffprobe(path)).durationS;
      const got = await oggOpusDurationS(path);
      expect(got).toBeLessThanOrEqual(expected);
      expect(got).toBeGreaterThan(expected - 0.02);
    }
  });

  it("gives undefined for Ogg/Vorbis, MP3 and broken files, so ffprobe is asked", async () => {
    const vorbis = join(dir, "v.ogg");
    const mp3 = join(dir, "a.mp3");
    await ffmpeg(["-f", "lavfi", "-i", "sine=d=1", "-c:a", "libvorbis", vorbis]);
    await ffmpeg(["-f", "lavfi", "-i", "sine=d=1", mp3]);
    const broken = join(dir, "broken.ogg");
    await writeFile(broken, "OggS but not really");
    for (const path of [vorbis, mp3, broken]) expect(await oggOpusDurationS(path)).toBeUndefined();
  });
});
