/** Transcription over the wire against the fake OpenAI-compatible speech server, with real audio. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createVoice, transcribe } from "../../agent/tools/voice/index.js";
import { HeraldError, ModelError } from "../../core/errors.js";
import {
  type FakeSpeech,
  ffmpeg,
  makeLongAudio,
  makeVoiceNote,
  type ProbedAudio,
  startFakeSpeech,
} from "../fakes/speech/index.js";

let dir: string;
let fake: FakeSpeech;
let note: string;
let long: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "voice-stt-"));
  [note, long] = await Promise.all([makeVoiceNote(dir), makeLongAudio(dir, 25 * 60)]);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await fake?.close();
});

const probeOf = (i: number): ProbedAudio => {
  const probe = fake.transcriptions[i]?.probe;
  if (!probe || "error" in probe) throw new Error(`request ${i} was not audio: ${JSON.stringify(probe)}`);
  return probe;
};

describe("transcribe", () => {
  it("sends an Ogg/Opus voice note as it is and returns the provider's text", async () => {
    fake = await startFakeSpeech({ apiKey: "sk-test" });
    const voice = createVoice({ stt: { baseUrl: fake.baseUrl, apiKey: "sk-test", model: "whisper-1" } });
    const result = await voice.transcribe?.(note, { language: "en" });
    expect(result).toEqual({ text: "hello from herald", durationS: expect.any(Number), chunks: 1 });
    expect(fake.transcriptions).toHaveLength(1);
    const got = fake.transcriptions[0];
    expect(got).toMatchObject({
      model: "whisper-1",
      filename: "audio.ogg",
      mimeType: "audio/ogg",
      language: "en",
      responseFormat: "json",
      authorization: "Bearer sk-test",
    });
    expect(probeOf(0)).toMatchObject({ codec: "opus", container: "ogg" });
    expect(probeOf(0).durationS).toBeGreaterThan(0.8);
  });

  it("converts audio providers refuse (AIFF) to Ogg/Opus before upload", async () => {
    fake = await startFakeSpeech();
    const aiff = join(dir, "note.aiff");
    await ffmpeg(["-i", join(dir, "note.wav"), aiff]);
    await transcribe(aiff, { baseUrl: fake.baseUrl, model: "whisper-1" });
    expect(fake.transcriptions[0]?.filename).toBe("audio.ogg");
    expect(probeOf(0)).toMatchObject({ codec: "opus", sampleRate: 48000, channels: 1 });
  });

  it("retries a 500 and returns the text of the next answer", async () => {
    fake = await startFakeSpeech();
    fake.fail({ status: 500, times: 1 });
    const result = await transcribe(note, { baseUrl: fake.baseUrl, model: "m", retryBaseDelayMs: 10 });
    expect(result.text).toBe("hello from herald");
    expect(fake.log.map((l) => l.status)).toEqual([500, 200]);
  });

  it("waits the retry-after of a 429 before trying again", async () => {
    fake = await startFakeSpeech();
    fake.fail({ status: 429, retryAfterS: 1 });
    const startedAt = performance.now();
    await transcribe(note, { baseUrl: fake.baseUrl, model: "m", retryBaseDelayMs: 10 });
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(950);
    expect(fake.log.map((l) => l.status)).toEqual([429, 200]);
  });

  it("times out a hanging attempt and retries it", async () => {
    fake = await startFakeSpeech();
    fake.stall(5_000);
    const startedAt = performance.now();
    const options = { baseUrl: fake.baseUrl, model: "m", timeoutMs: 1_500, retryBaseDelayMs: 10 };
    expect((await transcribe(note, options)).text).toBe("hello from herald");
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(1_490);
    expect(fake.transcriptions).toHaveLength(1);
  });

  it("gives up after 3 attempts with a retryable error", async () => {
    fake = await startFakeSpeech();
    fake.fail({ status: 503, times: 5 });
    const err = await transcribe(note, { baseUrl: fake.baseUrl, model: "m", retryBaseDelayMs: 10 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ModelError);
    expect(err).toMatchObject({ code: "model_unavailable", retryable: true, status: 503 });
    expect(fake.log).toHaveLength(3);
  });

  it("names the config key when the provider refuses the key, and does not retry", async () => {
    fake = await startFakeSpeech({ apiKey: "sk-right" });
    const voice = createVoice({ stt: { baseUrl: fake.baseUrl, apiKey: "sk-wrong", model: "whisper-1" } });
    const err = await voice.transcribe?.(note).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "unauthorized", status: 401, retryable: false });
    expect((err as Error).message).toMatch(/voice\.stt\.apiKey was refused/);
    expect((err as Error).message).not.toContain("sk-wrong");
    expect(fake.log).toHaveLength(1);
  });

  it("cuts 25 minutes into 10-minute chunks sent in order and joins their text in order", async () => {
    fake = await startFakeSpeech();
    fake.onTranscribe((req, i) => {
      const probe = "error" in req.probe ? undefined : req.probe;
      return `part ${i + 1} (${Math.round((probe?.durationS ?? 0) / 60)} min)`;
    });
    const result = await transcribe(long, { baseUrl: fake.baseUrl, model: "m", maxDurationS: 600 });
    expect(result.chunks).toBe(3);
    expect(result.text).toBe("part 1 (10 min) part 2 (10 min) part 3 (5 min)");
    expect(fake.transcriptions.map((t) => t.filename)).toEqual(["audio.mp3", "audio.mp3", "audio.mp3"]);
    // The next chunk is prompted with the tail of the previous one, for continuity across the cut.
    expect(fake.transcriptions.map((t) => t.prompt)).toEqual([
      undefined,
      "part 1 (10 min)",
      "part 2 (10 min)",
    ]);
  });

  it("re-encodes chunks to Ogg/Opus when copied chunks would be over the byte limit", async () => {
    fake = await startFakeSpeech();
    // 150 s of 16 kHz 16-bit WAV is 4.8 MB: 60-second copies (1.9 MB) would not fit 1 MB, Opus does.
    const wav = join(dir, "long.wav");
    await ffmpeg(["-f", "lavfi", "-i", "anullsrc=r=16000:cl=mono:d=150", "-c:a", "pcm_s16le", wav]);
    const options = { baseUrl: fake.baseUrl, model: "m", maxBytes: 1_000_000, chunkDurationS: 60 };
    const result = await transcribe(wav, options);
    expect(result.chunks).toBe(3);
    expect(fake.transcriptions.map((t) => t.filename)).toEqual(["audio.ogg", "audio.ogg", "audio.ogg"]);
    expect(fake.transcriptions.every((t) => t.bytes.length <= 1_000_000)).toBe(true);
    expect([0, 1, 2].map((i) => Math.round(probeOf(i).durationS))).toEqual([60, 60, 30]);
    expect(probeOf(2).codec).toBe("opus");
  });

  it("refuses audio over the hard cap before uploading anything", async () => {
    fake = await startFakeSpeech();
    const voice = createVoice({ stt: { baseUrl: fake.baseUrl, model: "m", maxTotalDurationS: 20 * 60 } });
    const err = await voice.transcribe?.(long).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HeraldError);
    expect(err).toMatchObject({ code: "invalid_input" });
    expect((err as Error).message).toBe(
      "the audio is 25.0 min long; Herald transcribes at most 20.0 min (raise voice.stt.maxTotalDurationS to allow longer audio)",
    );
    expect(fake.log).toHaveLength(0);
  });

  it("says which file it cannot read, and that a text file is not audio, without uploading", async () => {
    fake = await startFakeSpeech();
    const options = { baseUrl: fake.baseUrl, model: "m" };
    await expect(transcribe(join(dir, "missing.ogg"), options)).rejects.toMatchObject({
      code: "invalid_input",
      message: expect.stringContaining("cannot read the audio file"),
    });
    const text = join(dir, "notes.txt");
    await writeFile(text, "not audio at all");
    await expect(transcribe(text, options)).rejects.toMatchObject({ code: "invalid_input" });
    expect(fake.log).toHaveLength(0);
  });

  it("rejects with the caller's reason when aborted during a retry wait", async () => {
    fake = await startFakeSpeech();
    fake.fail({ status: 429, retryAfterS: 10 });
    const controller = new AbortController();
    const poll = setInterval(() => {
      if (fake.log.length === 1) controller.abort(new Error("user left"));
    }, 10);
    const err = await transcribe(
      note,
      { baseUrl: fake.baseUrl, model: "m" },
      { signal: controller.signal },
    ).catch((e: unknown) => e);
    clearInterval(poll);
    expect((err as Error).message).toBe("user left");
    expect(fake.log).toHaveLength(1);
  });
});
