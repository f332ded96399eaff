/** ffmpeg conversions and ffprobe probing on real audio made with espeak-ng. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ffmpegAvailable, probeAudio, toVoiceNote } from "../../agent/tools/voice/index.js";
import { espeak, ffprobe } from "../fakes/speech/index.js";

let dir: string;
let wav: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "voice-convert-"));
  wav = await espeak("this is a voice reply from herald", join(dir, "reply.wav"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("toVoiceNote", () => {
  it("makes an Ogg/Opus, 48 kHz, mono voice note as Telegram sendVoice and WhatsApp PTT want", async () => {
    const out = await toVoiceNote(wav, { format: "ogg-opus", outPath: join(dir, "reply.ogg") });
    const probe = await ffprobe(out);
    expect(probe).toMatchObject({ container: "ogg", codec: "opus", sampleRate: 48000, channels: 1 });
    const source = await ffprobe(wav);
    expect(probe.durationS).toBeCloseTo(source.durationS, 1);
  });

  it("makes MP3 and M4A audio files", async () => {
    const [mp3, m4a] = await Promise.all([
      toVoiceNote(wav, { format: "mp3" }),
      toVoiceNote(wav, { format: "m4a" }),
    ]);
    expect(mp3).toMatch(/\.mp3$/);
    expect(await ffprobe(mp3)).toMatchObject({ container: "mp3", codec: "mp3", channels: 1 });
    expect(m4a).toMatch(/\.m4a$/);
    expect(await ffprobe(m4a)).toMatchObject({ codec: "aac", channels: 1 });
    await Promise.all([rm(mp3), rm(m4a)]);
  });

  it("rejects with ffmpeg's reason when the input is not audio", async () => {
    const text = join(dir, "not-audio.ogg");
    await writeFile(text, "just text");
    await expect(toVoiceNote(text, { format: "mp3" })).rejects.toMatchObject({
      code: "tool_error",
      message: expect.stringMatching(/^ffmpeg failed: .+/),
    });
  });

  it("stops ffmpeg when the signal fires", async () => {
    const controller = new AbortController();
    controller.abort(new Error("cancelled"));
    await expect(toVoiceNote(wav, { format: "mp3", signal: controller.signal })).rejects.toThrow("cancelled");
  });
});

describe("probeAudio", () => {
  it("reads duration, codec and sample rate", async () => {
    const info = await probeAudio(wav);
    expect(info).toMatchObject({ codec: "pcm_s16le", sampleRate: 22050, channels: 1, container: "wav" });
    expect(info.durationS).toBeGreaterThan(1);
  });

  it("says a file is not audio with invalid_input", async () => {
    const text = join(dir, "notes.txt");
    await writeFile(text, "hello");
    await expect(probeAudio(text)).rejects.toMatchObject({ code: "invalid_input" });
  });
});

describe("ffmpegAvailable", () => {
  it("reports the installed version", async () => {
    const status = await ffmpegAvailable();
    expect(status).toMatchObject({ ok: true, version: expect.stringMatching(/\d/) });
  });

  it("tells doctor how to install it and what happens without it", async () => {
    const status = await ffmpegAvailable({ ffmpegPath: join(dir, "no-such-ffmpeg") });
    expect(status).toEqual({
      ok: false,
      message: `${join(dir, "no-such-ffmpeg")} is not installed or not on PATH: apt-get install ffmpeg; voice replies are sent as MP3 files without it`,
    });
  });
});
