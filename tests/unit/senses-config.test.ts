/** The senses' configuration: env names, errors naming the key, and what doctor says. */
import { describe, expect, it } from "vitest";
import { checkVision } from "../../agent/tools/vision/settings.js";
import { checkSpeech } from "../../agent/tools/voice/settings.js";
import { loadConfig } from "../../app/config.js";

const base = { HERALD_HOME: "/tmp/herald-senses-config" };

describe("senses configuration", () => {
  it("reads the vision and speech sections from HERALD_VISION_* and HERALD_TTS_*", () => {
    const config = loadConfig({
      env: {
        ...base,
        HERALD_VISION_URL: "http://127.0.0.1:9/v1",
        HERALD_VISION_MODEL: "eye-1",
        HERALD_VISION_KEY: "k",
        HERALD_TTS_URL: "http://127.0.0.1:9/v1",
        HERALD_TTS_MODEL: "tts-1",
        HERALD_TTS_VOICE: "alloy",
      },
    });
    expect(config.vision).toMatchObject({ baseUrl: "http://127.0.0.1:9/v1", model: "eye-1", apiKey: "k" });
    expect(checkVision(config).text).toBe("vision_analyze: eye-1 at http://127.0.0.1:9/v1");
    expect(checkSpeech(config)).toMatchObject({
      ok: true,
      text: expect.stringMatching(/^voice replies: tts-1 \(alloy\)/),
    });
    expect(config.agent.toolsets).toEqual(expect.arrayContaining(["voice", "vision", "messaging"]));
  });

  it("a vision section without its model is refused, naming the key", () => {
    expect(() => loadConfig({ env: { ...base, HERALD_VISION_URL: "http://127.0.0.1:9/v1" } })).toThrow(
      /vision\.model/,
    );
    expect(() =>
      loadConfig({ env: { ...base, HERALD_VISION_URL: "ftp://x", HERALD_VISION_MODEL: "m" } }),
    ).toThrow(/vision\.base_url|HERALD_VISION_URL/);
  });

  it("doctor says how to enable what is off, and names a bad speech key", () => {
    const off = loadConfig({ env: base });
    expect(checkVision(off).fix).toMatch(/HERALD_VISION_URL/);
    expect(checkSpeech(off).fix).toMatch(/HERALD_TTS_URL/);
    const bad = loadConfig({
      env: { ...base, HERALD_TTS_URL: "http://127.0.0.1:9/v1", HERALD_TTS_MODEL: "m" },
    });
    expect(checkSpeech(bad)).toMatchObject({
      ok: false,
      text: expect.stringMatching(/voice\.tts\.voice is missing/),
    });
  });
});
