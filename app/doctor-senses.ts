/** `herald doctor` lines of the senses: voice replies (text to speech) and the vision model. */

import { parseVoiceConfig } from "../agent/tools/voice/index.js";
import { describeError } from "../core/errors.js";
import type { HeraldConfig } from "./config.js";

/** One doctor line (the shape of `DoctorLine` in doctor.ts, kept here so the two files form no cycle). */
export interface SensesLine {
  ok: boolean;
  text: string;
  fix?: string;
}

/** Voice replies and `text_to_speech`: the speech endpoint, or how to add one. */
export function checkSpeech(config: HeraldConfig): SensesLine {
  if (!config.voice.tts)
    return {
      ok: true,
      text: "voice replies: off (/voice on says how to enable them; text_to_speech is absent)",
      fix: "set HERALD_TTS_URL, HERALD_TTS_MODEL and HERALD_TTS_VOICE (an OpenAI-compatible /v1 with /audio/speech)",
    };
  try {
    const { tts } = parseVoiceConfig({ tts: config.voice.tts }, "voice");
    return { ok: true, text: `voice replies: ${tts?.model} (${tts?.voice}) at ${tts?.baseUrl}` };
  } catch (err) {
    return {
      ok: false,
      text: `voice replies: ${describeError(err)}`,
      fix: "correct voice.tts in config.yaml",
    };
  }
}

/** `vision_analyze`: the auxiliary vision model, or how to add one. */
export function checkVision(config: HeraldConfig): SensesLine {
  if (!config.vision)
    return {
      ok: true,
      text: "vision_analyze: no vision model (the tool answers how to configure one)",
      fix: "set HERALD_VISION_URL, HERALD_VISION_MODEL and HERALD_VISION_KEY (vision: in config.yaml)",
    };
  return { ok: true, text: `vision_analyze: ${config.vision.model} at ${config.vision.baseUrl}` };
}
