/**
 * The `voice:` settings: speech to text for voice notes (`stt`) and text to speech for spoken replies
 * (`tts`), both OpenAI-compatible endpoints; their env names and reference rows, the doctor's lines
 * (the endpoints, ffmpeg) and the setup question for transcription.
 */
import { z } from "zod";
import { describeError } from "../../../core/errors.js";
import { type DoctorLine, defineFeature } from "../../../core/settings.js";
import type { SetupQuestions, StepContext } from "../../../core/setup.js";
import { checked, secret } from "../../../core/setup-steps.js";
import { parseVoiceConfig } from "./config.js";

/** The `voice` section; each part is checked when the voice tools are built. */
export const voiceSectionSchema = z
  .strictObject({
    stt: z.record(z.string(), z.unknown()).optional(),
    tts: z.record(z.string(), z.unknown()).optional(),
  })
  .prefault({});

/** The parsed `voice` section. */
export type VoiceSection = z.output<typeof voiceSectionSchema>;

/** Voice notes: the speech-to-text endpoint, and ffmpeg for long or unusual audio. */
export async function checkVoiceNotes(section: VoiceSection): Promise<DoctorLine[]> {
  if (!section.stt) {
    return [
      {
        ok: true,
        text: "voice notes: not transcribed (they reach the agent as files)",
        fix: "set HERALD_STT_URL and HERALD_STT_MODEL (an OpenAI-compatible /v1, e.g. Groq or a self-hosted Whisper)",
      },
    ];
  }
  // The speech libraries load for doctor's check only, not with the config.
  const [{ createVoice }, { ffmpegAvailable }] = await Promise.all([
    import("./create.js"),
    import("./convert.js"),
  ]);
  try {
    createVoice({ stt: section.stt });
  } catch (err) {
    return [
      { ok: false, text: `voice notes: ${describeError(err)}`, fix: "correct voice.stt in config.yaml" },
    ];
  }
  const ffmpeg = await ffmpegAvailable();
  return [
    { ok: true, text: "voice notes: transcribed before the turn" },
    ffmpeg.ok
      ? { ok: true, text: `ffmpeg: ${ffmpeg.version}` }
      : {
          ok: false,
          text: `ffmpeg: ${ffmpeg.message}`,
          fix: "apt-get install ffmpeg (long and unusual audio need it)",
        },
  ];
}

/** Voice replies and `text_to_speech` (reads `config.voice`): the speech endpoint, or how to add one. */
export function checkSpeech(config: { voice: VoiceSection }): DoctorLine {
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

async function transcriptionStep(ctx: StepContext): Promise<void> {
  const { p, files } = ctx;
  const url = await p.text({
    key: "speech.url",
    message: "Transcription endpoint base URL (OpenAI-compatible /v1; empty skips)",
    initial: files.get("voice.stt.base_url") as string | undefined,
    placeholder: "https://api.groq.com/openai/v1",
  });
  if (!url) return;
  const model = await p.text({
    key: "speech.model",
    message: "Transcription model",
    initial: (files.get("voice.stt.model") as string | undefined) ?? "whisper-1",
  });
  const key = await secret(ctx, "speech.key", "HERALD_STT_KEY", "Its API key (empty for none)");
  const reachable = await checked(
    ctx,
    `Checking ${url}`,
    async () => {
      const res = await fetch(`${url.replace(/\/+$/, "")}/models`, {
        headers: key.value ? { authorization: `Bearer ${key.value}` } : {},
        signal: AbortSignal.timeout(15_000),
      }).catch(() => undefined);
      return res ? res.status : 0;
    },
    (status) =>
      status === 0
        ? "not reachable (saved anyway)"
        : status === 401 || status === 403
          ? `answered ${status}: check the key`
          : "reachable",
  );
  if (reachable === 0) p.say("warn", "The endpoint did not answer; `herald doctor` checks it again.");
  files.set("voice.stt.base_url", url);
  if (model) files.set("voice.stt.model", model);
  if (key.isNew && key.value) files.setEnv("HERALD_STT_KEY", key.value);
}

const voiceSetup: SetupQuestions = {
  label: "Voice notes to text",
  hint: "an OpenAI-compatible transcription endpoint",
  chosenBy: "speech.url",
  flags: [
    {
      flag: "--stt-url <url>",
      key: "speech.url",
      env: "HERALD_STT_URL",
      help: "speech to text: an OpenAI-compatible /v1",
    },
    { flag: "--stt-key <key>", key: "speech.key", env: "HERALD_STT_KEY" },
    { flag: "--stt-model <name>", key: "speech.model", env: "HERALD_STT_MODEL" },
  ],
  step: transcriptionStep,
};

/** Speech in and out. */
export const voiceSettings = defineFeature({
  key: "voice",
  schema: voiceSectionSchema,
  env: {
    HERALD_STT_URL: ["stt.base_url", "url"],
    HERALD_STT_KEY: ["stt.api_key", "string"],
    HERALD_STT_MODEL: ["stt.model", "string"],
    HERALD_TTS_URL: ["tts.base_url", "url"],
    HERALD_TTS_KEY: ["tts.api_key", "string"],
    HERALD_TTS_MODEL: ["tts.model", "string"],
    HERALD_TTS_VOICE: ["tts.voice", "string"],
  },
  reference: {
    rows: [
      [
        "stt.base_url",
        "an OpenAI-compatible `/v1` with `/audio/transcriptions` (OpenAI, Groq, a Whisper server)",
        "none (no transcription)",
      ],
      ["stt.api_key", "", "none"],
      ["stt.model", "e.g. `whisper-1`", "required"],
      ["stt.language", "ISO-639-1 code", "detected"],
      [
        "stt.timeout_ms, .max_bytes, .max_duration_s, .chunk_duration_s, .max_total_duration_s",
        "limits of one transcription",
        "10-minute pieces, 2 hours in all",
      ],
      ["tts.base_url", "an OpenAI-compatible `/v1` with `/audio/speech`", "none (no speech)"],
      ["tts.api_key", "", "none"],
      ["tts.model", "e.g. `tts-1`", "required"],
      ["tts.voice", "e.g. `alloy`", "required"],
      ["tts.format", "`mp3`, `opus`, `aac`, `flac`, `wav`", "`opus` for voice notes, else `mp3`"],
      ["tts.timeout_ms, .max_input_chars", "", ""],
    ],
  },
  doctor: async (section) => [...(await checkVoiceNotes(section)), checkSpeech({ voice: section })],
  setup: voiceSetup,
});
