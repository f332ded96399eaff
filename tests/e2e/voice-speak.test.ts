/** Speech synthesis over the wire against the fake speech server, which answers real audio. */
import { rm, stat } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { createVoice, speak } from "../../agent/tools/voice/index.js";
import { type FakeSpeech, ffprobe, startFakeSpeech } from "../fakes/speech/index.js";

let fake: FakeSpeech;
const made: string[] = [];
afterEach(async () => {
  await fake?.close();
  await Promise.all(made.splice(0).map((p) => rm(p, { force: true })));
});

const sentence = "Herald reads this sentence aloud so that the test can hear it. ";

describe("speak", () => {
  it("splits 6,000 characters into two requests under 4,096 and joins the audio into one MP3", async () => {
    fake = await startFakeSpeech({ apiKey: "sk-tts" });
    const text = sentence.repeat(95); // 6,080 characters
    const voice = createVoice({
      tts: { baseUrl: fake.baseUrl, apiKey: "sk-tts", model: "tts-1", voice: "alloy" },
    });
    const path = await voice.speak?.(text);
    if (!path) throw new Error("speak is not configured");
    made.push(path);
    expect(path).toMatch(/\.mp3$/);
    expect(fake.speeches).toHaveLength(2);
    for (const s of fake.speeches) {
      expect(s).toMatchObject({ model: "tts-1", voice: "alloy", responseFormat: "mp3" });
      expect(s.input.length).toBeLessThanOrEqual(4096);
      expect(s.input.endsWith("hear it.")).toBe(true);
    }
    expect(fake.speeches.map((s) => s.input).join(" ")).toBe(text.trim());
    const probe = await ffprobe(path);
    expect(probe.codec).toBe("mp3");
    const partsS = fake.speeches.reduce((sum, s) => sum + s.durationS, 0);
    expect(partsS).toBeGreaterThan(60);
    expect(Math.abs(probe.durationS - partsS)).toBeLessThan(1);
  });

  it("writes short text from one request, in the asked format", async () => {
    fake = await startFakeSpeech();
    const path = await speak("Short reply.", {
      baseUrl: fake.baseUrl,
      model: "m",
      voice: "v",
      format: "opus",
    });
    made.push(path);
    expect(path).toMatch(/\.ogg$/);
    expect(fake.speeches).toHaveLength(1);
    expect(await ffprobe(path)).toMatchObject({ codec: "opus", container: "ogg" });
  });

  it("names the config key on 401 and leaves no file behind", async () => {
    fake = await startFakeSpeech({ apiKey: "sk-right" });
    const voice = createVoice({ tts: { baseUrl: fake.baseUrl, apiKey: "sk-old", model: "m", voice: "v" } });
    const err = await voice.speak?.(sentence.repeat(95)).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "unauthorized", status: 401 });
    expect((err as Error).message).toMatch(/voice\.tts\.apiKey was refused: set a valid API key/);
    expect(fake.speeches).toHaveLength(0);
  });

  it("refuses empty text without a request", async () => {
    fake = await startFakeSpeech();
    await expect(speak("  ", { baseUrl: fake.baseUrl, model: "m", voice: "v" })).rejects.toMatchObject({
      code: "invalid_input",
    });
    expect(fake.log).toHaveLength(0);
  });

  it("retries a 500 on one piece and still joins every piece", async () => {
    fake = await startFakeSpeech();
    fake.fail({ status: 500 });
    const path = await speak(sentence.repeat(95), {
      baseUrl: fake.baseUrl,
      model: "m",
      voice: "v",
      retryBaseDelayMs: 10,
    });
    made.push(path);
    expect(fake.log.map((l) => l.status).sort()).toEqual([200, 200, 500]);
    expect((await stat(path)).size).toBeGreaterThan(0);
  });
});
