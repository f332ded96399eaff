/** createVoice validates its configuration and names the bad key with the fix. */
import { describe, expect, it } from "vitest";
import { createVoice } from "../../agent/tools/voice/index.js";
import { ConfigError } from "../../core/errors.js";

const errorOf = (config: unknown): ConfigError => {
  try {
    createVoice(config);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error("createVoice accepted the configuration");
};

describe("createVoice", () => {
  it("offers transcribe and speak only when configured", () => {
    expect(createVoice(undefined).transcribe).toBeUndefined();
    const voice = createVoice({
      stt: { baseUrl: "https://api.groq.com/openai/v1", model: "whisper-large-v3-turbo" },
      tts: { baseUrl: "https://api.openai.com/v1", apiKey: "sk-x", model: "tts-1", voice: "alloy" },
    });
    expect(typeof voice.transcribe).toBe("function");
    expect(typeof voice.speak).toBe("function");
  });

  it("names a missing key and how to fill it", () => {
    const err = errorOf({ tts: { baseUrl: "https://api.openai.com/v1", model: "tts-1" } });
    expect(err.key).toBe("voice.tts.voice");
    expect(err.message).toBe("voice.tts.voice is missing: name a voice of the provider, e.g. alloy");
  });

  it("names a bad URL with examples of good ones", () => {
    const err = errorOf({ stt: { baseUrl: "api.openai.com", model: "whisper-1" } });
    expect(err.key).toBe("voice.stt.baseUrl");
    expect(err.message).toMatch(
      /^voice\.stt\.baseUrl is invalid \(.+\): set it to .*https:\/\/api\.openai\.com\/v1/,
    );
  });

  it("names an unknown key and lists the known ones", () => {
    const err = errorOf({ stt: { baseUrl: "https://x.test/v1", model: "m", api_key: "k" } });
    expect(err.key).toBe("voice.stt.api_key");
    expect(err.message).toMatch(
      /^voice\.stt\.api_key is invalid .*: remove it; the keys here are baseUrl, apiKey, /,
    );
  });
});
